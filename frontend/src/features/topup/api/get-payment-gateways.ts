import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { PaymentGateway } from '../types'
import { topupKeys } from './keys'

export function getPaymentGateways(signal?: AbortSignal): Promise<PaymentGateway[]> {
  return api.get<PaymentGateway[] | null>('/api/user/payment', { signal }).then((list) => list ?? [])
}

export function getPaymentGatewaysQueryOptions() {
  return queryOptions({ queryKey: topupKeys.gateways(), queryFn: ({ signal }) => getPaymentGateways(signal) })
}

/** GET /api/user/payment: the enabled gateways (an empty list when there are none). */
export function usePaymentGateways() {
  return useQuery(getPaymentGatewaysQueryOptions())
}
