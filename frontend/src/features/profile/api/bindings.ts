import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { completeWechat, type BindingProvider } from '@/lib/oauth'
import { setUser } from '@/stores/session'
import type { User } from '@/types/api'

/** DELETE /api/user/binding/{provider}: answers the updated user; refused for the last way to sign in. */
export const unbindProvider = (provider: BindingProvider) => api.delete<User>(`/api/user/binding/${provider}`)

/** Unbinds a third-party identity; the updated user is kept in the session store. */
export function useUnbindProvider() {
  return useMutation({ mutationFn: unbindProvider, onSuccess: (user) => setUser(user) })
}

/** GET /api/oauth/wechat?code=&state=: signed in, so the server binds WeChat to this account ("bind"). */
export function useBindWechat() {
  return useMutation({
    mutationFn: completeWechat,
    onSuccess: ({ user }) => setUser(user),
  })
}
