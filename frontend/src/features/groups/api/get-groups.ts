import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { UserGroup } from '../types'
import { groupKeys, type GroupListParams } from './keys'

export function getGroups(params: GroupListParams, signal?: AbortSignal): Promise<Page<UserGroup>> {
  return api.get<Page<UserGroup>>('/api/user_group', {
    query: { page: params.page, size: params.size, keyword: params.keyword || undefined },
    signal,
  })
}

export function getGroupsQueryOptions(params: GroupListParams) {
  return queryOptions({
    queryKey: groupKeys.list(params),
    queryFn: ({ signal }) => getGroups(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/user_group: paged; keyword (symbol, name or id). */
export function useGroups(params: GroupListParams) {
  return useQuery(getGroupsQueryOptions(params))
}
