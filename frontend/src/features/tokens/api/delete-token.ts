import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { tokenKeys } from './keys'

export function deleteToken(id: number): Promise<unknown> {
  return api.delete(`/api/token/${id}`)
}

/** DELETE /api/token/{id}. */
export function useDeleteToken() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteToken,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.lists() }),
  })
}
