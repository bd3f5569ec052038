import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { LogEntry, Page } from '@/types/api'
import { logKeys, type LogListParams, type LogScope } from './keys'

const text = (v: string) => v.trim() || undefined
const positive = (v: number) => (v > 0 ? v : undefined)

export function getLogs(scope: LogScope, params: LogListParams, signal?: AbortSignal): Promise<Page<LogEntry>> {
  const query = {
    page: params.page,
    size: params.size,
    type: positive(params.type),
    model_name: text(params.model_name),
    token_name: text(params.token_name),
    start_timestamp: positive(params.start_timestamp),
    end_timestamp: positive(params.end_timestamp),
    // The self route refuses the administrators' filters.
    ...(scope === 'all' ? { username: text(params.username), channel: text(params.channel) } : {}),
  }
  return api.get<Page<LogEntry>>(scope === 'all' ? '/api/log' : '/api/log/self', { query, signal })
}

export function getLogsQueryOptions(scope: LogScope, params: LogListParams) {
  return queryOptions({
    queryKey: logKeys.list(scope, params),
    queryFn: ({ signal }) => getLogs(scope, params, signal),
    placeholderData: keepPreviousData,
  })
}

export function useLogs(scope: LogScope, params: LogListParams) {
  return useQuery(getLogsQueryOptions(scope, params))
}
