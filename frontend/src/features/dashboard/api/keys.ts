export const dashboardKeys = {
  all: ['dashboard'] as const,
  usage: (days: number) => [...dashboardKeys.all, 'usage', days] as const,
}
