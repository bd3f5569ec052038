import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'

export function generateAccessToken(): Promise<string> {
  return api.post<string>('/api/user/token')
}

/** POST /api/user/token: a new access token (replacing the old one), returned this once. */
export function useGenerateAccessToken() {
  return useMutation({ mutationFn: generateAccessToken })
}
