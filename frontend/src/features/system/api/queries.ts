import { queryOptions, useQuery } from '@tanstack/react-query'
import { useRef } from 'react'
import { api } from '@/lib/api'
import type { LogPage, SystemInfo } from '../types'
import { systemKeys } from './keys'

export const getSystemInfo = (signal?: AbortSignal) => api.get<SystemInfo>('/api/system/info', { signal })

/** GET /api/system/info, polled every `intervalMs` (0: no auto refresh). */
export function useSystemInfo(intervalMs: number) {
  return useQuery(
    queryOptions({
      queryKey: systemKeys.info(),
      queryFn: ({ signal }) => getSystemInfo(signal),
      refetchInterval: intervalMs > 0 ? intervalMs : false,
      staleTime: 0,
    }),
  )
}

export const LOG_LIMIT = 200

export function getSystemLog(after: number | undefined, signal?: AbortSignal) {
  return api.get<LogPage>('/api/system/log', { query: { after, limit: LOG_LIMIT }, signal })
}

/**
 * GET /api/system/log: the newest lines first, then every poll asks only for the lines after
 * the last one seen (`after=next`). Each answer holds only the new lines; the caller appends.
 */
export function useSystemLog(intervalMs: number) {
  const cursor = useRef<number | undefined>(undefined)
  return useQuery(
    queryOptions({
      queryKey: systemKeys.log(),
      queryFn: async ({ signal }) => {
        const page = await getSystemLog(cursor.current, signal)
        cursor.current = page.next
        return page
      },
      refetchInterval: intervalMs > 0 ? intervalMs : false,
      staleTime: 0,
      gcTime: 0,
      structuralSharing: false,
    }),
  )
}
