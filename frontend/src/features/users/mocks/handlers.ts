import { http, HttpResponse } from 'msw'
import type { GroupMap, ManagedUser } from '../types'

const NOW = 1_735_689_600

export function mockManagedUser(overrides: Partial<ManagedUser> = {}): ManagedUser {
  return {
    id: 2,
    username: 'alice',
    display_name: 'Alice',
    role: 1,
    status: 1,
    email: 'alice@example.com',
    avatar_url: '',
    group: 'default',
    quota: 5_000_000,
    used_quota: 500_000,
    request_count: 12,
    aff_code: 'abcd1234',
    aff_count: 0,
    aff_quota: 0,
    aff_history_quota: 0,
    inviter_id: 0,
    github_id: '',
    oidc_id: '',
    lark_id: '',
    wechat_id: '',
    telegram_id: '',
    has_access_token: false,
    created_at: NOW,
    last_login_at: 0,
    ...overrides,
  }
}

export const mockGroupMap: GroupMap = {
  default: { name: 'Default', ratio: 1, api_rate: 0, public: true },
  vip: { name: 'VIP', ratio: 0.8, api_rate: 0, public: false },
}

/** A fake user store: list (filters, paging), create, update, manage, quota. */
let users: ManagedUser[] = []
let nextId = 2

export function resetUserMocks(initial: ManagedUser[] = []): void {
  users = initial.map((u) => ({ ...u }))
  nextId = Math.max(1, ...users.map((u) => u.id)) + 1
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })
const notFound = () => HttpResponse.json({ success: false, message: 'user not found', code: 'not_found' }, { status: 404 })

export const userHandlers = [
  http.get('*/api/user_group_map', () => ok(mockGroupMap)),
  http.get('*/api/user', ({ request }) => {
    const url = new URL(request.url)
    const page = Number(url.searchParams.get('page') ?? 1)
    const size = Number(url.searchParams.get('size') ?? 10)
    const keyword = url.searchParams.get('keyword') ?? ''
    const group = url.searchParams.get('group') ?? ''
    const role = Number(url.searchParams.get('role') ?? 0)
    const status = Number(url.searchParams.get('status') ?? 0)
    const order = url.searchParams.get('order') ?? '-id'
    const field = order.replace(/^-/, '') as keyof ManagedUser
    const sign = order.startsWith('-') ? -1 : 1
    const matched = users
      .filter((u) => !keyword || u.username.includes(keyword) || u.email.includes(keyword) || String(u.id) === keyword)
      .filter((u) => !group || u.group === group)
      .filter((u) => !role || u.role === role)
      .filter((u) => !status || u.status === status)
      .sort((a, b) => {
        const x = a[field] ?? ''
        const y = b[field] ?? ''
        return (Number(x > y) - Number(x < y)) * sign
      })
    return ok({ data: matched.slice((page - 1) * size, page * size), page, size, total_count: matched.length })
  }),
  http.post('*/api/user', async ({ request }) => {
    const body = (await request.json()) as Partial<ManagedUser>
    const user = mockManagedUser({ ...body, id: nextId++ })
    users.push(user)
    return ok(user, 201)
  }),
  http.put('*/api/user', async ({ request }) => {
    const body = (await request.json()) as Partial<ManagedUser> & { id: number }
    const user = users.find((u) => u.id === body.id)
    if (!user) return notFound()
    Object.assign(user, body)
    return ok(user)
  }),
  http.post('*/api/user/manage', async ({ request }) => {
    const { id, action } = (await request.json()) as { id: number; action: string }
    const user = users.find((u) => u.id === id)
    if (!user) return notFound()
    if (action === 'delete') {
      users = users.filter((u) => u.id !== id)
      return ok({ id, deleted: true })
    }
    if (action === 'enable') user.status = 1
    if (action === 'disable') user.status = 2
    if (action === 'promote') user.role = 10
    if (action === 'demote') user.role = 1
    return ok({ id, role: user.role, status: user.status })
  }),
  http.post('*/api/user/quota/:id', async ({ request, params }) => {
    const { quota } = (await request.json()) as { quota: number }
    const user = users.find((u) => u.id === Number(params.id))
    if (!user) return notFound()
    user.quota += quota
    return ok(user)
  }),
]
