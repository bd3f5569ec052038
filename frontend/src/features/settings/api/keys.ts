export const settingsKeys = {
  all: ['settings'] as const,
  options: () => [...settingsKeys.all, 'options'] as const,
}
