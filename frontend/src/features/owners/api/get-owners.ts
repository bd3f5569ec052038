import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { ModelOwner } from '../types'
import { ownerKeys } from './keys'

export function getOwners(signal?: AbortSignal): Promise<ModelOwner[]> {
  return api.get<ModelOwner[]>('/api/model_ownedby', { signal })
}

export function getOwnersQueryOptions() {
  return queryOptions({
    queryKey: ownerKeys.list(),
    queryFn: ({ signal }) => getOwners(signal),
  })
}

/** GET /api/model_ownedby: every model owner (not paged). */
export function useOwners() {
  return useQuery(getOwnersQueryOptions())
}
