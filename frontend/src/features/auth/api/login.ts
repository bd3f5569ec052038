import { useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query'
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
 * A sign-in succeeded (password or third party): a clean cache for the new session, the user
 * stored (localStorage `user` and app state) and, unless told otherwise, the user groups loaded
 * (spec 4: the Lark sign-in loads only the user).
 */
export function completeSignIn(queryClient: QueryClient, user: User, { loadGroups = true } = {}): void {
  removeUserQueries(queryClient)
  setUser(user)
  queryClient.setQueryData(authKeys.self(), user)
  if (loadGroups) void loadUserGroups()
}

/** POST /api/user/login; on success the user and the user groups are loaded (spec 4). */
export function useLogin() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: login,
    onSuccess: (user) => completeSignIn(queryClient, user),
  })
}
