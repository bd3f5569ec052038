import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { GroupPayload } from '../schemas'
import type { UserGroup } from '../types'
import { groupKeys } from './keys'

export function createGroup(payload: GroupPayload): Promise<UserGroup> {
  return api.post<UserGroup>('/api/user_group', payload)
}

export function updateGroup(payload: { id: number } & Partial<GroupPayload>): Promise<UserGroup> {
  return api.put<UserGroup>('/api/user_group', payload)
}

/** POST /api/user_group. */
export function useCreateGroup() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createGroup,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: groupKeys.lists() }),
  })
}

/** PUT /api/user_group {id, ...}: the symbol cannot change. */
export function useUpdateGroup() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateGroup,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: groupKeys.lists() }),
  })
}
