import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { ManageAction } from '../types'
import { userKeys } from './keys'

export function manageUser(payload: { id: number; action: ManageAction }): Promise<unknown> {
  return api.post('/api/user/manage', payload)
}

/** POST /api/user/manage {id, action}: enable, disable, delete, promote, demote. */
export function useManageUser() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: manageUser,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: userKeys.lists() }),
  })
}
