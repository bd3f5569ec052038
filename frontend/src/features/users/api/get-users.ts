import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { ManagedUser } from '../types'
import { userKeys, type UserListParams } from './keys'

export function getUsers(params: UserListParams, signal?: AbortSignal): Promise<Page<ManagedUser>> {
  return api.get<Page<ManagedUser>>('/api/user', {
    query: {
      page: params.page,
      size: params.size,
      keyword: params.keyword || undefined,
      group: params.group || undefined,
      role: params.role || undefined,
      status: params.status || undefined,
      order: params.order || undefined,
    },
    signal,
  })
}

export function getUsersQueryOptions(params: UserListParams) {
  return queryOptions({
    queryKey: userKeys.list(params),
    queryFn: ({ signal }) => getUsers(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/user: keyword (username, display name, e-mail, id), group, role, status, order, paging. */
export function useUsers(params: UserListParams) {
  return useQuery(getUsersQueryOptions(params))
}
