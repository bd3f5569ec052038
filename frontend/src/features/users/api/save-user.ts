import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { UserCreatePayload, UserUpdatePayload } from '../schemas'
import type { ManagedUser } from '../types'
import { userKeys } from './keys'

export function createUser(payload: UserCreatePayload): Promise<ManagedUser> {
  return api.post<ManagedUser>('/api/user', payload)
}

export function updateUser(payload: UserUpdatePayload & { id: number }): Promise<ManagedUser> {
  return api.put<ManagedUser>('/api/user', payload)
}

/** POST /api/user {username, password, display_name?, email?, group?, quota?, role?, remark?}. */
export function useCreateUser() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createUser,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: userKeys.lists() }),
  })
}

/** PUT /api/user {id, username?, display_name?, password?, email?, group?}. */
export function useUpdateUser() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateUser,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: userKeys.lists() }),
  })
}
