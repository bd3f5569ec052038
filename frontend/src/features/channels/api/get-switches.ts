import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { isSwitchKey, type ChannelTypeSwitches, type SwitchKey } from '../types'
import { channelKeys } from './keys'

export function getChannelSwitches(signal?: AbortSignal): Promise<ChannelTypeSwitches[]> {
  return api.get<ChannelTypeSwitches[]>('/api/channel/switches', { signal })
}

/** The switches of each type the console knows, by type id (switches it does not know are left out). */
export function switchesByType(rows: readonly ChannelTypeSwitches[]): ReadonlyMap<number, readonly SwitchKey[]> {
  return new Map(rows.map((r) => [r.type, r.switches.filter(isSwitchKey)]))
}

/**
 * GET /api/channel/switches (administrators): the provider switches each channel type supports;
 * types without any are not listed. Read once when a channel form first opens and kept: the list
 * changes only with the server's version.
 */
export function useChannelSwitches(enabled = true) {
  return useQuery(
    queryOptions({
      queryKey: channelKeys.switches(),
      queryFn: ({ signal }) => getChannelSwitches(signal),
      select: switchesByType,
      staleTime: Infinity,
      enabled,
    }),
  )
}
