import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { Redemption } from '../types'
import { redemptionKeys, type RedemptionListParams } from './keys'

export function getRedemptions(params: RedemptionListParams, signal?: AbortSignal): Promise<Page<Redemption>> {
  return api.get<Page<Redemption>>('/api/redemption', {
    query: {
      page: params.page,
      size: params.size,
      keyword: params.keyword || undefined,
      status: params.status || undefined,
    },
    signal,
  })
}

export function getRedemptionsQueryOptions(params: RedemptionListParams) {
  return queryOptions({
    queryKey: redemptionKeys.list(params),
    queryFn: ({ signal }) => getRedemptions(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/redemption: codes, newest first; keyword (name, whole code or id), status, paging. */
export function useRedemptions(params: RedemptionListParams) {
  return useQuery(getRedemptionsQueryOptions(params))
}
