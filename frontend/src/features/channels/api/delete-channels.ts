import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { channelKeys } from './keys'

export function deleteChannel(id: number): Promise<unknown> {
  return api.delete(`/api/channel/${id}`)
}

export function batchDeleteChannels(ids: number[]): Promise<{ deleted: number }> {
  return api.post<{ deleted: number }>('/api/channel/batch_delete', { ids })
}

export function deleteDisabledChannels(): Promise<{ deleted: number }> {
  return api.delete<{ deleted: number }>('/api/channel/disabled')
}

function useChannelsMutation<V, R>(fn: (v: V) => Promise<R>) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: fn,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all }),
  })
}

/** DELETE /api/channel/{id}. */
export const useDeleteChannel = () => useChannelsMutation(deleteChannel)

/** POST /api/channel/batch_delete {ids} (1-500) → {deleted}. */
export const useBatchDeleteChannels = () => useChannelsMutation(batchDeleteChannels)

/** DELETE /api/channel/disabled: every channel with status 2 or 3 → {deleted}. */
export const useDeleteDisabledChannels = () => useChannelsMutation((_: void) => deleteDisabledChannels())
