import type { PeriodParams } from '../types'

export const analyticsKeys = {
  all: ['analytics'] as const,
  statistics: (p: PeriodParams) => [...analyticsKeys.all, 'statistics', p] as const,
  period: (p: PeriodParams) => [...analyticsKeys.all, 'period', p] as const,
  users: (p: PeriodParams & { page: number; size: number }) => [...analyticsKeys.all, 'users', p] as const,
}
