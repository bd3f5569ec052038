import { usePage } from '@/lib/list-query'
import type { Order } from '../types'
import { paymentKeys, type OrderListParams } from './keys'

/** GET /api/payment/order?page=&size=&trade_no=&user_id=&status=: every user's orders, newest first. */
export function useOrders(params: OrderListParams) {
  return usePage<Order>('/api/payment/order', paymentKeys.orderList(params), params)
}
