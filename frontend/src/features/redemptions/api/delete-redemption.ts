import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { redemptionKeys } from './keys'

export function deleteRedemption(id: number): Promise<unknown> {
  return api.delete(`/api/redemption/${id}`)
}

export function deleteInvalidRedemptions(): Promise<{ deleted: number }> {
  return api.delete<{ deleted: number }>('/api/redemption/invalid')
}

/** DELETE /api/redemption/{id}. */
export function useDeleteRedemption() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteRedemption,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: redemptionKeys.lists() }),
  })
}

/** DELETE /api/redemption/invalid: every disabled and used code → {deleted}. */
export function useDeleteInvalidRedemptions() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteInvalidRedemptions,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: redemptionKeys.lists() }),
  })
}
