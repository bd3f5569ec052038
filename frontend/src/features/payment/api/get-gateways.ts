import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { Gateway } from '../types'
import { paymentKeys, type GatewayListParams } from './keys'

export function getGateways(params: GatewayListParams, signal?: AbortSignal): Promise<Page<Gateway>> {
  return api.get<Page<Gateway>>('/api/payment', {
    query: { page: params.page, size: params.size, keyword: params.keyword || undefined },
    signal,
  })
}

export function getGatewaysQueryOptions(params: GatewayListParams) {
  return queryOptions({
    queryKey: paymentKeys.gatewayList(params),
    queryFn: ({ signal }) => getGateways(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/payment?page=&size=&keyword=: gateways, sort descending then id. */
export function useGateways(params: GatewayListParams) {
  return useQuery(getGatewaysQueryOptions(params))
}
