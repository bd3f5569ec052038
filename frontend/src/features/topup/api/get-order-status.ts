import { api } from '@/lib/api'
import type { OrderState } from '../types'

/** GET /api/user/order/status?trade_no=: one of the user's orders (polled by poll-order.ts). */
export function getOrderStatus(tradeNo: string, signal?: AbortSignal): Promise<OrderState> {
  return api.get<OrderState>('/api/user/order/status', { query: { trade_no: tradeNo }, signal })
}
