import { http, HttpResponse } from 'msw'
import type { Token } from '@/types/api'

const NOW = 1_735_689_600 // 2025-01-01 00:00:00 UTC

export function mockToken(overrides: Partial<Token> = {}): Token {
  return {
    id: 1,
    user_id: 1,
    name: 'default',
    key: 'sk-abcd**wxyz',
    status: 1,
    created_at: NOW,
    accessed_at: 0,
    expired_at: -1,
    remain_quota: 500_000,
    unlimited_quota: false,
    used_quota: 0,
    request_count: 0,
    group: '',
    models: '',
    subnet: '',
    api_rate: 0,
    heartbeat_enabled: false,
    heartbeat_timeout: 30,
    cache_enabled: false,
    ...overrides,
  }
}

export const fullKeyOf = (id: number) => `sk-${String(id).padStart(48, 'k')}`

/** A fake key store: list (keyword, paging), create, update, delete, reveal. */
let tokens: Token[] = []
let nextId = 1

export function resetTokenMocks(initial: Token[] = []): void {
  tokens = initial.map((t) => ({ ...t }))
  nextId = Math.max(0, ...tokens.map((t) => t.id)) + 1
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })

export const tokenHandlers = [
  http.get('*/api/token', ({ request }) => {
    const url = new URL(request.url)
    const page = Number(url.searchParams.get('page') ?? 1)
    const size = Number(url.searchParams.get('size') ?? 10)
    const keyword = url.searchParams.get('keyword') ?? ''
    const matched = tokens
      .filter((t) => !keyword || t.name.includes(keyword) || String(t.id) === keyword)
      .sort((a, b) => b.id - a.id)
    return ok({ data: matched.slice((page - 1) * size, page * size), page, size, total_count: matched.length })
  }),
  http.get('*/api/token/:id/key', ({ params }) => {
    const token = tokens.find((t) => t.id === Number(params.id))
    if (!token) return HttpResponse.json({ success: false, message: 'token not found', code: 'not_found' }, { status: 404 })
    return ok({ key: fullKeyOf(token.id) })
  }),
  http.post('*/api/token', async ({ request }) => {
    const body = (await request.json()) as Partial<Token>
    const token = mockToken({ ...body, id: nextId++, key: 'sk-new0**wxyz' })
    tokens.push(token)
    return ok({ ...token, key: fullKeyOf(token.id) }, 201)
  }),
  http.put('*/api/token', async ({ request }) => {
    const body = (await request.json()) as Partial<Token> & { id: number }
    const token = tokens.find((t) => t.id === body.id)
    if (!token) return HttpResponse.json({ success: false, message: 'token not found', code: 'not_found' }, { status: 404 })
    Object.assign(token, body)
    return ok(token)
  }),
  http.delete('*/api/token/:id', ({ params }) => {
    tokens = tokens.filter((t) => t.id !== Number(params.id))
    return ok(null)
  }),
]
