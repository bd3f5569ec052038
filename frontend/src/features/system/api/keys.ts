export const systemKeys = {
  all: ['system'] as const,
  info: () => [...systemKeys.all, 'info'] as const,
  log: () => [...systemKeys.all, 'log'] as const,
}
