import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { User } from '@/types/api'
import type { RegisterPayload } from '../schemas'

/** What the public calls send: the Turnstile token (`?turnstile=`) when the site asks for the check. */
interface Checked {
  turnstile?: string
}

export const register = ({ turnstile, ...payload }: RegisterPayload & Checked) =>
  api.post<User>('/api/user/register', payload, { query: { turnstile } })
export const sendVerification = ({ email, turnstile }: { email: string } & Checked) =>
  api.get<unknown>('/api/verification', { query: { email, turnstile } })
export const sendReset = ({ email, turnstile }: { email: string } & Checked) =>
  api.get<unknown>('/api/reset_password', { query: { email, turnstile } })
export const confirmReset = (body: { email: string; token: string }) => api.post<string>('/api/user/reset', body)

/** POST /api/user/register. */
export const useRegister = () => useMutation({ mutationFn: register })
/** GET /api/verification?email=: e-mails a registration code. */
export const useSendVerification = () => useMutation({ mutationFn: sendVerification })
/** GET /api/reset_password?email=: e-mails a reset link (same answer whether or not the address exists). */
export const useSendReset = () => useMutation({ mutationFn: sendReset })
/** POST /api/user/reset {email, token}: sets a new random password and returns it once. */
export const useConfirmReset = () => useMutation({ mutationFn: confirmReset })
