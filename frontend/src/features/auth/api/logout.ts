import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { clearUser } from '@/stores/session'
import { authKeys } from './keys'

export function logout(): Promise<unknown> {
  return api.post<unknown>('/api/user/logout')
}

/**
 * POST /api/user/logout, then forget the user whatever the server said. The caller navigates
 * to /; the route guard does the same if it sees the session end first.
 */
export function useLogout() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: logout,
    meta: { silentUnauthorized: true },
    onSettled: () => {
      clearUser('logout')
      // Stop a pending self check; the next sign-in starts from a clean cache (see useLogin).
      void queryClient.cancelQueries({ queryKey: authKeys.all })
    },
  })
}
