import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { SiteInfo } from '@/types/api'
import { siteKeys } from './keys'

export function getStatus(signal?: AbortSignal): Promise<Partial<SiteInfo>> {
  return api.get<Partial<SiteInfo>>('/api/status', { signal })
}

export function getStatusQueryOptions() {
  return queryOptions({
    queryKey: siteKeys.status(),
    queryFn: ({ signal }) => getStatus(signal),
    staleTime: 5 * 60_000,
    retry: false,
    // The loader shows its own message and falls back to the stored copy.
    meta: { silent: true, public: true },
  })
}

export function useStatus() {
  return useQuery(getStatusQueryOptions())
}
