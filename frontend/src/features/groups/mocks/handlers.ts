import { http, HttpResponse } from 'msw'
import type { UserGroup } from '../types'

const NOW = 1_735_689_600

export function mockGroup(overrides: Partial<UserGroup> = {}): UserGroup {
  return {
    id: 1,
    symbol: 'default',
    name: 'Default',
    ratio: 1,
    public: true,
    api_rate: 0,
    promotion: false,
    min_topup: 0,
    max_topup: 0,
    enabled: true,
    created_at: NOW,
    updated_at: NOW,
    ...overrides,
  }
}

/** A fake group store: list (keyword, paging), create, update, status, delete. */
let groups: UserGroup[] = []
let nextId = 1

export function resetGroupMocks(initial: UserGroup[] = []): void {
  groups = initial.map((g) => ({ ...g }))
  nextId = Math.max(0, ...groups.map((g) => g.id)) + 1
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })

export const groupHandlers = [
  http.get('*/api/user_group', ({ request }) => {
    const url = new URL(request.url)
    const page = Number(url.searchParams.get('page') ?? 1)
    const size = Number(url.searchParams.get('size') ?? 10)
    const keyword = url.searchParams.get('keyword') ?? ''
    const matched = groups.filter(
      (g) => !keyword || g.symbol.includes(keyword) || g.name.includes(keyword) || String(g.id) === keyword,
    )
    return ok({ data: matched.slice((page - 1) * size, page * size), page, size, total_count: matched.length })
  }),
  http.post('*/api/user_group', async ({ request }) => {
    const body = (await request.json()) as Partial<UserGroup>
    const group = mockGroup({ ...body, id: nextId++ })
    groups.push(group)
    return ok(group, 201)
  }),
  http.put('*/api/user_group/status', async ({ request }) => {
    const body = (await request.json()) as { id: number; enabled: boolean }
    const group = groups.find((g) => g.id === body.id)
    if (!group) return HttpResponse.json({ success: false, message: 'user group not found' }, { status: 404 })
    group.enabled = body.enabled
    return ok(group)
  }),
  http.put('*/api/user_group', async ({ request }) => {
    const body = (await request.json()) as Partial<UserGroup> & { id: number }
    const group = groups.find((g) => g.id === body.id)
    if (!group) return HttpResponse.json({ success: false, message: 'user group not found' }, { status: 404 })
    Object.assign(group, body)
    return ok(group)
  }),
  http.delete('*/api/user_group/:id', ({ params }) => {
    groups = groups.filter((g) => g.id !== Number(params.id))
    return ok(null)
  }),
]
