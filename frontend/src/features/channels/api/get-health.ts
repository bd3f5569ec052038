import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { ChannelHealth, ChannelHealthPair } from '../types'
import { channelKeys } from './keys'

export function getChannelHealth(signal?: AbortSignal): Promise<ChannelHealth> {
  return api.get<ChannelHealth>('/api/channel/health', { signal })
}

/** The pairs whose breaker holds them out (open or probing), by channel id. */
export function heldOutByChannel(health: ChannelHealth): ReadonlyMap<number, ChannelHealthPair[]> {
  const out = new Map<number, ChannelHealthPair[]>()
  for (const p of health.pairs) {
    if (p.state === 'closed') continue
    out.set(p.channel_id, [...(out.get(p.channel_id) ?? []), p])
  }
  return out
}

/**
 * GET /api/channel/health (administrators): the answering node's circuit breakers and latency per
 * channel and model, refreshed every 30 s while the channels screen is open.
 */
export function useChannelHealth() {
  return useQuery(
    queryOptions({
      queryKey: channelKeys.health(),
      queryFn: ({ signal }) => getChannelHealth(signal),
      select: heldOutByChannel,
      refetchInterval: 30_000,
    }),
  )
}
