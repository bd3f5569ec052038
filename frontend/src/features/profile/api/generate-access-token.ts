import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'

export function generateAccessToken(): Promise<string> {
  return api.get<string>('/api/user/token')
}

/** GET /api/user/token: a new access token (replacing the old one), returned this once. */
export function useGenerateAccessToken() {
  return useMutation({ mutationFn: generateAccessToken })
}
