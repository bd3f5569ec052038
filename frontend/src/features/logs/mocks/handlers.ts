import { http, HttpResponse } from 'msw'
import type { LogEntry } from '@/types/api'

export function mockLog(overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    id: 1,
    created_at: 1_735_689_600,
    type: 2,
    user_id: 1,
    username: 'root',
    token_id: 1,
    token_name: 'default',
    model_name: 'gpt-4o-mini',
    group: 'default',
    quota: 1_500,
    prompt_tokens: 120,
    completion_tokens: 30,
    use_time_ms: 842,
    first_response_ms: 300,
    is_stream: false,
    cache_hit: false,
    source_ip: '127.0.0.1',
    request_id: 'req-1',
    content: 'model price 0.15/0.6',
    metadata: null,
    ...overrides,
  }
}

const page = (url: URL, data: LogEntry[]) =>
  HttpResponse.json({
    success: true,
    message: '',
    data: {
      data,
      page: Number(url.searchParams.get('page') ?? 1),
      size: Number(url.searchParams.get('size') ?? 10),
      total_count: data.length,
    },
  })

/** Sums as GET /api/log/stat answers them. */
export function mockStat(overrides: Partial<Record<'quota' | 'prompt_tokens' | 'completion_tokens' | 'request_count' | 'rpm' | 'tpm', number>> = {}) {
  return { quota: 0, prompt_tokens: 0, completion_tokens: 0, request_count: 0, rpm: 0, tpm: 0, ...overrides }
}

const stat = () => HttpResponse.json({ success: true, message: '', data: mockStat() })

/** Default: no logs. Tests install their own with server.use(...). */
export const logHandlers = [
  http.get('*/api/log/self/stat', stat),
  http.get('*/api/log/stat', stat),
  http.get('*/api/log/self', ({ request }) => page(new URL(request.url), [])),
  http.get('*/api/log', ({ request }) => page(new URL(request.url), [])),
]
