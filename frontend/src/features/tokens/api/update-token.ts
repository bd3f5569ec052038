import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Token } from '@/types/api'
import type { TokenPayload } from '../schemas'
import { tokenKeys } from './keys'

export type UpdateTokenPayload = { id: number } & (Partial<TokenPayload> | { status: 1 | 2 })

export function updateToken(payload: UpdateTokenPayload): Promise<Token> {
  return api.put<Token>('/api/token', payload)
}

/** PUT /api/token {id, ...}: edit the fields, or enable/disable with {id, status}. */
export function useUpdateToken() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateToken,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tokenKeys.lists() }),
  })
}
