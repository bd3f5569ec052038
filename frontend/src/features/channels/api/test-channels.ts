import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { TestAllSummary, TestResult } from '../types'
import { channelKeys } from './keys'

export function testChannel({ id, model }: { id: number; model?: string }): Promise<TestResult> {
  return api.get<TestResult>(`/api/channel/test/${id}`, { query: { model: model || undefined } })
}

export function testAllChannels(): Promise<TestAllSummary> {
  return api.get<TestAllSummary>('/api/channel/test')
}

/**
 * GET /api/channel/test/{id}?model=: a one-token request; stores the response time → {time_ms}.
 * A failure is 502 with the upstream's message. The list is refreshed either way (the test may
 * have changed the status).
 */
export function useTestChannel() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: testChannel,
    onSettled: () => queryClient.invalidateQueries({ queryKey: channelKeys.lists() }),
  })
}

/** GET /api/channel/test: tests every enabled and auto-disabled channel → {tested, failed, disabled, enabled}. */
export function useTestAllChannels() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: testAllChannels,
    onSettled: () => queryClient.invalidateQueries({ queryKey: channelKeys.lists() }),
  })
}
