import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { setUser } from '@/stores/session'
import type { User } from '@/types/api'

/** POST /api/user/email/code {email}: e-mails a code that binds the address to this account. */
export const sendBindCode = ({ email, turnstile }: { email: string; turnstile?: string }) =>
  api.post<unknown>('/api/user/email/code', { email }, { query: { turnstile } })

/** POST /api/user/email/bind {email, code}: answers the updated user. */
export const bindEmail = (body: { email: string; code: string }) => api.post<User>('/api/user/email/bind', body)

export function useSendBindCode() {
  return useMutation({ mutationFn: sendBindCode })
}

/** Binds the address; the updated user is kept in the session store. */
export function useBindEmail() {
  return useMutation({ mutationFn: bindEmail, onSuccess: (user) => setUser(user) })
}
