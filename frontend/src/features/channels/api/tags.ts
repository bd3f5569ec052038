import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { ChannelTag } from '../types'
import { channelKeys } from './keys'

export function getTags(signal?: AbortSignal): Promise<ChannelTag[]> {
  return api.get<ChannelTag[]>('/api/channel/tags', { signal })
}

export interface TagEdit {
  tag: string
  priority?: number
  weight?: number
  status?: 1 | 2
}

export function updateTag(edit: TagEdit): Promise<{ updated: number }> {
  return api.put<{ updated: number }>('/api/channel/tag', edit)
}

export function deleteTagDisabled(tag: string): Promise<{ deleted: number }> {
  return api.delete<{ deleted: number }>(`/api/channel/tag/${encodeURIComponent(tag)}/disabled`)
}

/** GET /api/channel/tags: [{tag, count}]. */
export function useTags(enabled = true) {
  return useQuery(
    queryOptions({ queryKey: channelKeys.tags(), queryFn: ({ signal }) => getTags(signal), enabled }),
  )
}

/** PUT /api/channel/tag {tag, priority?, weight?, status?}: applied to every channel of the tag. */
export function useUpdateTag() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateTag,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all }),
  })
}

/** DELETE /api/channel/tag/{tag}/disabled → {deleted}. */
export function useDeleteTagDisabled() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteTagDisabled,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all }),
  })
}
