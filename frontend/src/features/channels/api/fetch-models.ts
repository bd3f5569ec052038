import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'

export function fetchUpstreamModels(id: number): Promise<string[]> {
  return api.get<string[]>(`/api/channel/fetch_models/${id}`)
}

/** GET /api/channel/fetch_models/{id}: the upstream's model ids (a saved channel only). */
export function useFetchUpstreamModels() {
  return useMutation({ mutationFn: fetchUpstreamModels })
}
