import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Dashboard } from '../types'
import { dashboardKeys } from './keys'

export function getDashboard(days: number, signal?: AbortSignal): Promise<Dashboard> {
  return api.get<Dashboard>('/api/user/dashboard', { query: { days }, signal })
}

export function getDashboardQueryOptions(days: number) {
  return queryOptions({
    queryKey: dashboardKeys.usage(days),
    queryFn: ({ signal }) => getDashboard(days, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/user/dashboard: the user's usage per day and model over the last `days` days. */
export function useDashboard(days: number) {
  return useQuery(getDashboardQueryOptions(days))
}
