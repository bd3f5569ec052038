import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { setUser } from '@/stores/session'
import type { User } from '@/types/api'
import type { UpdateSelfPayload } from '../schemas'

export function updateSelf(payload: UpdateSelfPayload): Promise<User> {
  return api.put<User>('/api/user/self', payload)
}

/** PUT /api/user/self; the answer is the updated user, kept in the session store. */
export function useUpdateSelf() {
  return useMutation({ mutationFn: updateSelf, onSuccess: (user) => setUser(user) })
}
