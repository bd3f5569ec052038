import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { Order } from '../types'
import { paymentKeys, type OrderListParams } from './keys'

export function getOrders(params: OrderListParams, signal?: AbortSignal): Promise<Page<Order>> {
  return api.get<Page<Order>>('/api/payment/order', {
    query: {
      page: params.page,
      size: params.size,
      trade_no: params.trade_no || undefined,
      user_id: params.user_id || undefined,
      status: params.status || undefined,
    },
    signal,
  })
}

export function getOrdersQueryOptions(params: OrderListParams) {
  return queryOptions({
    queryKey: paymentKeys.orderList(params),
    queryFn: ({ signal }) => getOrders(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/payment/order?page=&size=&trade_no=&user_id=&status=: every user's orders, newest first. */
export function useOrders(params: OrderListParams) {
  return useQuery(getOrdersQueryOptions(params))
}
