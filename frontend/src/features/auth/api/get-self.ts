import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { sessionStore, setUser } from '@/stores/session'
import type { User } from '@/types/api'
import { loadUserGroups } from './get-user-groups'
import { authKeys } from './keys'

export function getSelf(signal?: AbortSignal): Promise<User> {
  return api.get<User>('/api/user/self', { signal })
}

export function getSelfQueryOptions() {
  return queryOptions({
    queryKey: authKeys.self(),
    queryFn: async ({ signal }) => {
      const user = await getSelf(signal)
      setUser(user)
      // A restored session (page reload) has no groups yet.
      if (!sessionStore.get().userGroup) void loadUserGroups()
      return user
    },
    // Always ask the server when a protected screen mounts.
    staleTime: 0,
    refetchOnMount: 'always',
    // Not signed in is not an error to toast: the guard redirects to /login.
    meta: { silentUnauthorized: true },
  })
}

export function useSelf() {
  return useQuery(getSelfQueryOptions())
}
