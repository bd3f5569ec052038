import { http, HttpResponse } from 'msw'
import type { PeriodSeries, Statistics, UserUsage } from '../types'

const DAY = 86_400
const TODAY = 1_735_689_600

export const mockStatistics = (o: Partial<Statistics> = {}): Statistics => ({
  quota: 2_500_000,
  request_count: 321,
  prompt_tokens: 40_000,
  completion_tokens: 9_000,
  users: 3,
  channels: 2,
  total_users: 12,
  total_channels: 4,
  enabled_channels: 3,
  start_day: TODAY - 6 * DAY,
  end_day: TODAY,
  days: 7,
  ...o,
})

export const mockPeriod = (o: Partial<PeriodSeries> = {}): PeriodSeries => ({
  start_day: TODAY - 6 * DAY,
  end_day: TODAY,
  days: 7,
  by_day: Array.from({ length: 7 }, (_, i) => ({
    day: TODAY - (6 - i) * DAY,
    quota: i * 100_000,
    request_count: i * 10,
    prompt_tokens: 0,
    completion_tokens: 0,
  })),
  by_model: [
    { model_name: 'gpt-4o', quota: 2_000_000, request_count: 300, prompt_tokens: 0, completion_tokens: 0 },
    { model_name: 'gpt-4o-mini', quota: 500_000, request_count: 21, prompt_tokens: 0, completion_tokens: 0 },
  ],
  series: [],
  ...o,
})

export const mockUserUsage = (o: Partial<UserUsage> = {}): UserUsage => ({
  user_id: 2,
  username: 'alice',
  quota: 2_000_000,
  request_count: 300,
  prompt_tokens: 30_000,
  completion_tokens: 7_000,
  tokens: 37_000,
  ...o,
})

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data })

export const analyticsHandlers = [
  http.get('*/api/analytics/statistics', () => ok(mockStatistics())),
  http.get('*/api/analytics/period', () => ok(mockPeriod())),
  http.get('*/api/analytics/users', ({ request }) => {
    const q = new URL(request.url).searchParams
    return ok({
      ...mockPeriod(),
      data: [mockUserUsage(), mockUserUsage({ user_id: 3, username: 'bob', quota: 500_000, request_count: 21, tokens: 2_000 })],
      page: Number(q.get('page') ?? 1),
      size: Number(q.get('size') ?? 10),
      total_count: 2,
    })
  }),
]
