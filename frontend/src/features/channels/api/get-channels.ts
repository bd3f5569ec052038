import { usePage } from '@/lib/list-query'
import type { Channel } from '../types'
import { channelKeys, type ChannelListParams } from './keys'

/** GET /api/channel: filters type, status, group, tag, model, keyword; order; paging. */
export function useChannels(params: ChannelListParams) {
  return usePage<Channel>('/api/channel', channelKeys.list(params), params)
}
