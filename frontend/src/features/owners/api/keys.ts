export const ownerKeys = {
  all: ['owners'] as const,
  list: () => [...ownerKeys.all, 'list'] as const,
}
