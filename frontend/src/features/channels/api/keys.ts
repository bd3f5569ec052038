export interface ChannelFilters {
  keyword: string
  /** 0 = any. */
  type: number
  /** 0 = any. */
  status: number
  group: string
  tag: string
  model: string
  /** `field` or `-field`. */
  order: string
}

export interface ChannelListParams extends ChannelFilters {
  page: number
  size: number
}

export const channelKeys = {
  all: ['channels'] as const,
  lists: () => [...channelKeys.all, 'list'] as const,
  list: (params: ChannelListParams) => [...channelKeys.lists(), params] as const,
  tags: () => [...channelKeys.all, 'tags'] as const,
  /**
   * The provider switches of each type: fixed by the server's version, so outside `all` (saving
   * a channel does not refetch them).
   */
  switches: () => ['channel-switches'] as const,
  /**
   * The answering node's circuit breakers and latency per channel and model: refreshed on its own
   * interval, outside `all` (a channel edit does not change them).
   */
  health: () => ['channel-health'] as const,
}
