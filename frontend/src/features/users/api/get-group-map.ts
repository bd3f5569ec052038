import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { GroupMap } from '../types'
import { userKeys } from './keys'

export function getGroupMap(signal?: AbortSignal): Promise<GroupMap> {
  return api.get<GroupMap>('/api/user_group_map', { signal })
}

/** GET /api/user_group_map: for administrators, every enabled group (suggestions in the user form). */
export function useGroupMap() {
  return useQuery(
    queryOptions({
      queryKey: userKeys.groupMap(),
      queryFn: ({ signal }) => getGroupMap(signal),
      staleTime: 60_000,
    }),
  )
}
