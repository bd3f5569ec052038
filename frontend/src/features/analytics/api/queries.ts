import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { PeriodParams, PeriodSeries, Statistics, UserUsagePage } from '../types'
import { analyticsKeys } from './keys'

export const getStatistics = (p: PeriodParams, signal?: AbortSignal) =>
  api.get<Statistics>('/api/analytics/statistics', { query: { ...p }, signal })

/** GET /api/analytics/statistics: totals of the period and inventory counts. */
export function useStatistics(p: PeriodParams) {
  return useQuery(
    queryOptions({ queryKey: analyticsKeys.statistics(p), queryFn: ({ signal }) => getStatistics(p, signal), placeholderData: keepPreviousData }),
  )
}

export const getPeriod = (p: PeriodParams, signal?: AbortSignal) =>
  api.get<PeriodSeries>('/api/analytics/period', { query: { ...p }, signal })

/** GET /api/analytics/period: per day and per model. */
export function usePeriod(p: PeriodParams) {
  return useQuery(
    queryOptions({ queryKey: analyticsKeys.period(p), queryFn: ({ signal }) => getPeriod(p, signal), placeholderData: keepPreviousData }),
  )
}

export const getUserUsage = (p: PeriodParams & { page: number; size: number }, signal?: AbortSignal) =>
  api.get<UserUsagePage>('/api/analytics/users', { query: { ...p }, signal })

/** GET /api/analytics/users: usage per user, most quota first, paged. */
export function useUserUsage(p: PeriodParams & { page: number; size: number }) {
  return useQuery(
    queryOptions({ queryKey: analyticsKeys.users(p), queryFn: ({ signal }) => getUserUsage(p, signal), placeholderData: keepPreviousData }),
  )
}

/** The CSV download of the period's per-day, per-model rows. */
export function exportCsvUrl(p: PeriodParams): string {
  return `/api/analytics/export.csv?start_timestamp=${p.start_timestamp}&end_timestamp=${p.end_timestamp}`
}
