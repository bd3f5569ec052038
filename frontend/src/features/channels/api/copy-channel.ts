import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { channelKeys } from './keys'

export function copyChannel(id: number): Promise<{ id: number }> {
  return api.post<{ id: number }>(`/api/channel/copy/${id}`)
}

/** POST /api/channel/copy/{id}: a new channel with the same settings and key (name + "_copy") → {id}. */
export function useCopyChannel() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: copyChannel,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all }),
  })
}
