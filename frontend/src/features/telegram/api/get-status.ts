import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { TelegramStatus } from '../types'
import { telegramKeys } from './keys'

export function getTelegramStatus(signal?: AbortSignal): Promise<TelegramStatus> {
  return api.get<TelegramStatus>('/api/option/telegram/status', { signal })
}

export function getTelegramStatusQueryOptions() {
  return queryOptions({
    queryKey: telegramKeys.status(),
    queryFn: ({ signal }) => getTelegramStatus(signal),
  })
}

/** GET /api/option/telegram/status: configured, webhook (online) or polling (offline), running, reload needed. */
export function useTelegramStatus() {
  return useQuery(getTelegramStatusQueryOptions())
}
