import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Gateway, GatewayPayload } from '../types'
import { paymentKeys } from './keys'

export function updateGateway(payload: GatewayPayload & { id: number }): Promise<Gateway> {
  return api.put<Gateway>('/api/payment', payload)
}

/** PUT /api/payment {id, ...}: every field is sent; an empty secret in `config` keeps the stored one. */
export function useUpdateGateway() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateGateway,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: paymentKeys.gateways() }),
  })
}
