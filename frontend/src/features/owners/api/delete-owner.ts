import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { ownerKeys } from './keys'

export function deleteOwner(id: number): Promise<unknown> {
  return api.delete(`/api/model_ownedby/${id}`)
}

/** DELETE /api/model_ownedby/{id}: refused (409) while prices name the owner. */
export function useDeleteOwner() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteOwner,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ownerKeys.all }),
  })
}
