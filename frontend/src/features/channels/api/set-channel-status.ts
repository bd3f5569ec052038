import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { channelKeys } from './keys'

export function setChannelStatus(payload: { id: number; status: 1 | 2 }): Promise<unknown> {
  return api.put('/api/channel/status', payload)
}

/** PUT /api/channel/status {id, status}: 1 enable, 2 disable. */
export function useSetChannelStatus() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: setChannelStatus,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.lists() }),
  })
}
