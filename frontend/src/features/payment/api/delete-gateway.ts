import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { paymentKeys } from './keys'

export function deleteGateway(id: number): Promise<unknown> {
  return api.delete(`/api/payment/${id}`)
}

/** DELETE /api/payment/{id}. */
export function useDeleteGateway() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteGateway,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: paymentKeys.gateways() }),
  })
}
