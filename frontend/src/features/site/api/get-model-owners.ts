import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { SiteModelOwner } from '@/types/api'
import { siteKeys } from './keys'

export function getModelOwners(signal?: AbortSignal): Promise<SiteModelOwner[]> {
  return api.get<SiteModelOwner[]>('/api/model_ownedby', { signal })
}

/**
 * GET /api/model_ownedby at start-up (spec sections 1 and 7): the owners go into the site
 * store (`ownedby`); a failure shows the server's message through the central handler.
 */
export function useModelOwners() {
  return useQuery(
    queryOptions({
      queryKey: siteKeys.owners(),
      queryFn: ({ signal }) => getModelOwners(signal),
      staleTime: 5 * 60_000,
      retry: false,
      meta: { public: true },
    }),
  )
}
