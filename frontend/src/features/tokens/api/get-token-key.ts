import { queryOptions } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { tokenKeys } from './keys'

export function getTokenKey(id: number, signal?: AbortSignal): Promise<{ key: string }> {
  return api.get<{ key: string }>(`/api/token/${id}/key`, { signal })
}

/** GET /api/token/{id}/key: the full key again. Never cached: read it when the user asks. */
export function getTokenKeyQueryOptions(id: number) {
  return queryOptions({
    queryKey: tokenKeys.key(id),
    queryFn: ({ signal }) => getTokenKey(id, signal).then((d) => d.key),
    staleTime: 0,
    gcTime: 0,
  })
}
