import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { PlaygroundToken } from '../types'

const TOKENS_KEY = ['tokens'] as const

/** POST /api/token/playground: the user's playground key (made once, then returned again). */
export function createPlaygroundToken(): Promise<PlaygroundToken> {
  return api.post<PlaygroundToken>('/api/token/playground')
}

/** The quick start's key. */
export function useCreatePlaygroundToken() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createPlaygroundToken,
    // The key shows up on the tokens screen (features/tokens; named here to keep features apart).
    onSuccess: () => queryClient.invalidateQueries({ queryKey: TOKENS_KEY }),
  })
}
