import { http, HttpResponse } from 'msw'
import type { LogLine, SystemInfo } from '../types'

export const mockSystemInfo = (o: Partial<SystemInfo> = {}): SystemInfo => ({
  cpu_percent: 12.5,
  memory: { total_bytes: 8 * 1024 ** 3, used_bytes: 6 * 1024 ** 3, process_rss_bytes: 150 * 1024 ** 2 },
  cores: 4,
  uptime_seconds: 90_061,
  start_time: 1_735_689_600,
  version: 'v0.17.0',
  backend: 'sqlite',
  redis: false,
  pending_consume_records: 0,
  ...o,
})

export const mockLine = (seq: number, text = `line ${seq}`, level = 'INFO'): LogLine => ({
  seq,
  time: '2025-01-01T00:00:00.000Z',
  level,
  text,
})

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data })

export const systemHandlers = [
  http.get('*/api/system/info', () => ok(mockSystemInfo())),
  http.get('*/api/system/log', ({ request }) => {
    const after = new URL(request.url).searchParams.get('after')
    if (after === null) return ok({ lines: [mockLine(1), mockLine(2, 'boom', 'ERROR')], next: 2, truncated: false, capacity: 2000 })
    return ok({ lines: [], next: Number(after), truncated: false, capacity: 2000 })
  }),
]
