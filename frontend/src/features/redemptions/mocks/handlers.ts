import { http, HttpResponse } from 'msw'
import type { Redemption } from '../types'

const NOW = 1_735_689_600 // 2025-01-01 00:00:00 UTC

export function mockRedemption(overrides: Partial<Redemption> = {}): Redemption {
  return {
    id: 1,
    user_id: 1,
    name: 'promo',
    code: 'abcdefghijklmnopqrstuvwxyz012345',
    status: 1,
    quota: 500_000,
    created_at: NOW,
    redeemed_at: 0,
    used_user_id: 0,
    ...overrides,
  }
}

export const codeOf = (n: number) => `code${String(n).padStart(28, '0')}`

/** A fake code store: list (keyword, status, paging), create, update, delete. */
let rows: Redemption[] = []
let nextId = 1

export function resetRedemptionMocks(initial: Redemption[] = []): void {
  rows = initial.map((r) => ({ ...r }))
  nextId = Math.max(0, ...rows.map((r) => r.id)) + 1
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })

export const redemptionHandlers = [
  http.get('*/api/redemption', ({ request }) => {
    const url = new URL(request.url)
    const page = Number(url.searchParams.get('page') ?? 1)
    const size = Number(url.searchParams.get('size') ?? 10)
    const keyword = url.searchParams.get('keyword') ?? ''
    const status = Number(url.searchParams.get('status') ?? 0)
    const matched = rows
      .filter((r) => !keyword || r.name.includes(keyword) || r.code === keyword || String(r.id) === keyword)
      .filter((r) => !status || r.status === status)
      .sort((a, b) => b.id - a.id)
    return ok({ data: matched.slice((page - 1) * size, page * size), page, size, total_count: matched.length })
  }),
  http.post('*/api/redemption', async ({ request }) => {
    const body = (await request.json()) as { name: string; quota: number; count: number }
    const codes: string[] = []
    for (let i = 0; i < body.count; i++) {
      const id = nextId++
      codes.push(codeOf(id))
      rows.push(mockRedemption({ id, name: body.name, quota: body.quota, code: codeOf(id) }))
    }
    return ok({ codes }, 201)
  }),
  http.put('*/api/redemption', async ({ request }) => {
    const body = (await request.json()) as Partial<Redemption> & { id: number }
    const row = rows.find((r) => r.id === body.id)
    if (!row) return HttpResponse.json({ success: false, message: 'redemption code not found' }, { status: 404 })
    Object.assign(row, body)
    return ok(row)
  }),
  http.delete('*/api/redemption/invalid', () => {
    const before = rows.length
    rows = rows.filter((r) => r.status === 1)
    return ok({ deleted: before - rows.length })
  }),
  http.delete('*/api/redemption/:id', ({ params }) => {
    rows = rows.filter((r) => r.id !== Number(params.id))
    return ok(null)
  }),
]
