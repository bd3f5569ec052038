import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Gateway, GatewayPayload } from '../types'
import { paymentKeys } from './keys'

export function createGateway(payload: GatewayPayload): Promise<Gateway> {
  return api.post<Gateway>('/api/payment', payload)
}

/** POST /api/payment: the type's secrets are required (epay `config.key`; Stripe `secret_key` and `webhook_secret`). */
export function useCreateGateway() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createGateway,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: paymentKeys.gateways() }),
  })
}
