import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Token } from '@/types/api'
import type { TokenPayload } from '../schemas'
import { tokenKeys } from './keys'

export function createToken(payload: TokenPayload): Promise<Token> {
  return api.post<Token>('/api/token', payload)
}

/** POST /api/token; the answer carries the full key (shown this once). */
export function useCreateToken() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createToken,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.lists() }),
  })
}
