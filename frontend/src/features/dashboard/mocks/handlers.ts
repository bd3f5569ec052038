import { http, HttpResponse } from 'msw'
import type { Dashboard, Usage } from '../types'

export const DAY = 86_400
export const TODAY = 1_735_689_600 // 2025-01-01 UTC

const usage = (quota: number, request_count: number, cache_hits = 0): Usage => ({
  quota,
  request_count,
  prompt_tokens: request_count * 100,
  completion_tokens: request_count * 20,
  cache_hits,
})

/**
 * Seven days, two models: gpt-4o-mini on the last two days (2 of today's 5 requests answered
 * from the cache), claude on the last one.
 */
export function mockDashboard(overrides: Partial<Dashboard> = {}): Dashboard {
  const start = TODAY - 6 * DAY
  const series = [
    { day: TODAY - DAY, model_name: 'gpt-4o-mini', ...usage(500_000, 10) },
    { day: TODAY, model_name: 'gpt-4o-mini', ...usage(250_000, 5, 2) },
    { day: TODAY, model_name: 'claude-3-5-haiku', ...usage(1_000_000, 2) },
  ]
  return {
    days: 7,
    start_day: start,
    end_day: TODAY,
    series,
    by_day: Array.from({ length: 7 }, (_, i) => {
      const day = start + i * DAY
      if (day === TODAY - DAY) return { day, ...usage(500_000, 10) }
      if (day === TODAY) return { day, ...usage(1_250_000, 7, 2) }
      return { day, ...usage(0, 0) }
    }),
    by_model: [
      { model_name: 'claude-3-5-haiku', ...usage(1_000_000, 2) },
      { model_name: 'gpt-4o-mini', ...usage(750_000, 15, 2) },
    ],
    totals: usage(1_750_000, 17, 2),
    ...overrides,
  }
}

export const PLAYGROUND_KEY = `sk-${'p'.repeat(48)}`

export const dashboardHandlers = [
  http.get('*/api/user/dashboard', () => HttpResponse.json({ success: true, message: '', data: mockDashboard() })),
  http.post('*/api/token/playground', () =>
    HttpResponse.json({ success: true, message: '', data: { id: 9, key: PLAYGROUND_KEY, created: true } }, { status: 201 }),
  ),
]
