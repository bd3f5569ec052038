export const siteKeys = {
  all: ['site'] as const,
  status: () => [...siteKeys.all, 'status'] as const,
}
