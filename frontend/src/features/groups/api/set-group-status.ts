import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { UserGroup } from '../types'
import { groupKeys } from './keys'

export function setGroupStatus(payload: { id: number; enabled: boolean }): Promise<UserGroup> {
  return api.put<UserGroup>('/api/user_group/status', payload)
}

/** PUT /api/user_group/status {id, enabled} (`default` cannot be disabled). */
export function useSetGroupStatus() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: setGroupStatus,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: groupKeys.lists() }),
  })
}
