export const authKeys = {
  all: ['auth'] as const,
  self: () => [...authKeys.all, 'self'] as const,
}
