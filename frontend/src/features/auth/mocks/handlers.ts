import { http, HttpResponse } from 'msw'
import type { User } from '@/types/api'

export const mockRoot: User = {
  id: 1,
  username: 'root',
  display_name: 'Root User',
  role: 100,
  status: 1,
  email: '',
  group: 'default',
  quota: 250_000_000,
  used_quota: 1_234_567,
  request_count: 42,
  avatar_url: '',
}

export const MOCK_PASSWORD = '123456'

/** A fake server session: login sets it, logout clears it, self reads it. */
let signedIn: User | null = null

export function resetAuthMocks(user: User | null = null): void {
  signedIn = user
}

export const authHandlers = [
  http.post('*/api/user/login', async ({ request }) => {
    const body = (await request.json()) as { username?: string; password?: string }
    if (body.username === mockRoot.username && body.password === MOCK_PASSWORD) {
      signedIn = mockRoot
      return HttpResponse.json({ success: true, message: '', data: mockRoot })
    }
    return HttpResponse.json({ success: false, message: '用户名或密码错误，或用户已被封禁' })
  }),
  http.get('*/api/user/self', () =>
    signedIn
      ? HttpResponse.json({ success: true, message: '', data: signedIn })
      : HttpResponse.json({ success: false, message: '无权进行此操作，未登录且未提供 access token' }, { status: 401 }),
  ),
  http.post('*/api/user/logout', () => {
    signedIn = null
    return HttpResponse.json({ success: true, message: '' })
  }),
]
