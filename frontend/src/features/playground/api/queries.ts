import { queryOptions, useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'

export interface PlaygroundKey {
  id: number
  key: string
  created: boolean
}

/** POST /api/token/playground: the user's playground key (made on first use). */
export function usePlaygroundKey() {
  return useMutation({
    mutationFn: () => api.post<PlaygroundKey>('/api/token/playground'),
  })
}

interface AvailableModelRow {
  model: string
  price: unknown
}

/** The models the user may call and that have a price (an unpriced model cannot be called). */
export function playgroundModelsQueryOptions() {
  return queryOptions({
    queryKey: ['playground', 'models'] as const,
    queryFn: ({ signal }) =>
      api
        .get<AvailableModelRow[]>('/api/available_model', { signal })
        .then((rows) => rows.filter((r) => r.price !== null && !r.model.endsWith('*')).map((r) => r.model)),
    staleTime: 60_000,
  })
}
