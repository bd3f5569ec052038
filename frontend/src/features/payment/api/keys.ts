import type { OrderStatus } from '../types'

export interface GatewayListParams {
  page: number
  size: number
  keyword: string
}

export interface OrderListParams {
  page: number
  size: number
  trade_no: string
  /** '' = any user. */
  user_id: string
  /** '' = any status. */
  status: OrderStatus | ''
}

export const paymentKeys = {
  all: ['payment'] as const,
  gateways: () => [...paymentKeys.all, 'gateways'] as const,
  gatewayList: (params: GatewayListParams) => [...paymentKeys.gateways(), params] as const,
  orders: () => [...paymentKeys.all, 'orders'] as const,
  orderList: (params: OrderListParams) => [...paymentKeys.orders(), params] as const,
}
