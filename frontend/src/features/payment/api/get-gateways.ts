import { usePage } from '@/lib/list-query'
import type { Gateway } from '../types'
import { paymentKeys, type GatewayListParams } from './keys'

/** GET /api/payment?page=&size=&keyword=: gateways, sort descending then id. */
export function useGateways(params: GatewayListParams) {
  return usePage<Gateway>('/api/payment', paymentKeys.gatewayList(params), params)
}
