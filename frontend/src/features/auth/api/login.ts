import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { removeUserQueries } from '@/lib/query-client'
import { setUser } from '@/stores/session'
import type { User } from '@/types/api'
import type { LoginPayload } from '../schemas'
import { loadUserGroups } from './get-user-groups'
import { authKeys } from './keys'

/** The sign-in, with the Turnstile token when the site asks for the check (`?turnstile=`). */
export function login({ turnstile, ...payload }: LoginPayload & { turnstile?: string }): Promise<User> {
  return api.post<User>('/api/user/login', payload, { query: { turnstile } })
}

/**
 * POST /api/user/login; on success the user is stored (localStorage `user` and app state) and
 * the user groups are loaded (spec 4).
 */
export function useLogin() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: login,
    onSuccess: (user) => {
      removeUserQueries(queryClient)
      setUser(user)
      queryClient.setQueryData(authKeys.self(), user)
      void loadUserGroups()
    },
  })
}
