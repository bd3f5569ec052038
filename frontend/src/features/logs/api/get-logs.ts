import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { LogEntry, Page } from '@/types/api'
import { logKeys, type LogFilters, type LogListParams, type LogScope } from './keys'

const text = (v: string) => v.trim() || undefined
const positive = (v: number) => (v > 0 ? v : undefined)

/** The query of the list and stat routes; the self routes refuse the administrators' filters. */
function filterQuery(scope: LogScope, f: LogFilters) {
  return {
    type: positive(f.type),
    model_name: text(f.model_name),
    token_name: text(f.token_name),
    group: text(f.group),
    source_ip: text(f.source_ip),
    start_timestamp: positive(f.start_timestamp),
    end_timestamp: positive(f.end_timestamp),
    ...(scope === 'all' ? { username: text(f.username), channel: text(f.channel) } : {}),
  }
}

export function getLogs(scope: LogScope, params: LogListParams, signal?: AbortSignal): Promise<Page<LogEntry>> {
  const query = { page: params.page, size: params.size, ...filterQuery(scope, params) }
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

/** GET /api/log/stat and /api/log/self/stat: sums of the consume logs the filter selects. */
export interface LogStat {
  quota: number
  prompt_tokens: number
  completion_tokens: number
  request_count: number
  /** Requests and tokens of the last 60 seconds. */
  rpm: number
  tpm: number
}

export function getLogStat(scope: LogScope, filters: LogFilters, signal?: AbortSignal): Promise<LogStat> {
  return api.get<LogStat>(scope === 'all' ? '/api/log/stat' : '/api/log/self/stat', {
    query: filterQuery(scope, filters),
    signal,
  })
}

export function useLogStat(scope: LogScope, filters: LogFilters) {
  return useQuery(
    queryOptions({
      queryKey: logKeys.stat(scope, filters),
      queryFn: ({ signal }) => getLogStat(scope, filters, signal),
      placeholderData: keepPreviousData,
    }),
  )
}
