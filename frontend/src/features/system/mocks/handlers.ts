import { http, HttpResponse } from 'msw'
import type { Lease, LogLine, SystemInfo } from '../types'

export const mockLease = (o: Partial<Lease> = {}): Lease => ({
  name: 'telegram',
  holder: '12345-ab12CD34',
  expires_at: 1_735_689_630,
  held: true,
  ...o,
})

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
  leases: [
    mockLease(),
    mockLease({ name: 'task-poll' }),
    mockLease({ name: 'channel-test', holder: '67890-zz99YY88', held: false, expires_at: 1_735_689_000 }),
  ],
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
