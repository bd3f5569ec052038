import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { groupKeys } from './keys'

export function deleteGroup(id: number): Promise<unknown> {
  return api.delete(`/api/user_group/${id}`)
}

/** DELETE /api/user_group/{id}: refused (409) for `default` and groups still in use. */
export function useDeleteGroup() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteGroup,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: groupKeys.lists() }),
  })
}
