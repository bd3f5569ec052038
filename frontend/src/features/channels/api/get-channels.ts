import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { Channel } from '../types'
import { channelKeys, type ChannelListParams } from './keys'

export function getChannels(params: ChannelListParams, signal?: AbortSignal): Promise<Page<Channel>> {
  return api.get<Page<Channel>>('/api/channel', {
    query: {
      page: params.page,
      size: params.size,
      keyword: params.keyword || undefined,
      type: params.type || undefined,
      status: params.status || undefined,
      group: params.group || undefined,
      tag: params.tag || undefined,
      model: params.model || undefined,
      order: params.order || undefined,
    },
    signal,
  })
}

export function getChannelsQueryOptions(params: ChannelListParams) {
  return queryOptions({
    queryKey: channelKeys.list(params),
    queryFn: ({ signal }) => getChannels(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/channel: filters type, status, group, tag, model, keyword; order; paging. */
export function useChannels(params: ChannelListParams) {
  return useQuery(getChannelsQueryOptions(params))
}
