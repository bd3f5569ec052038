import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { ChannelPayload } from '../schemas'
import type { Channel } from '../types'
import { channelKeys } from './keys'

export function createChannels(payload: ChannelPayload): Promise<{ ids: number[]; count: number }> {
  return api.post<{ ids: number[]; count: number }>('/api/channel', payload)
}

export function updateChannel(payload: { id: number } & Partial<ChannelPayload>): Promise<Channel> {
  return api.put<Channel>('/api/channel', payload)
}

/** POST /api/channel: one channel per line of `key` → {ids, count}. */
export function useCreateChannels() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createChannels,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all }),
  })
}

/** PUT /api/channel {id, ...}: an empty or missing key keeps the current one. */
export function useUpdateChannel() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateChannel,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all }),
  })
}
