import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { setUser } from '@/stores/session'
import type { User } from '@/types/api'

/** GET /api/user/self: reads the account again (e.g. after binding it in Telegram), kept in the session store. */
export function useRefreshSelf() {
  return useMutation({
    mutationFn: () => api.get<User>('/api/user/self'),
    onSuccess: (user) => setUser(user),
  })
}
