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
  issuedStates = 0
}

/** Who the fake server has signed in (null: nobody). */
export function mockSignedIn(): User | null {
  return signedIn
}

/** What the fake providers send back: a good code and the identity it stands for. */
export const MOCK_OAUTH_CODE = 'good-code'
export const MOCK_WECHAT_CODE = '123456'
export const MOCK_IDENTITY = { github: 'gh-1001', oidc: 'oidc-sub-1', lark: 'ou_lark1', wechat: 'wx-openid-1' } as const

/** The states `/api/oauth/state` hands out (a new one each time, as the server does). */
let issuedStates = 0
export const mockIssuedState = () => `st-${issuedStates}`

/** The authorize page each provider would show; the state is the server's. */
export const mockAuthorizeUrl = (provider: string) => `https://${provider}.example/authorize?client_id=cid&state=st-${provider}`

/**
 * The third-party sign-in as the server does it: bound to the signed-in account ("bind"), or a
 * sign-in as root. A wrong code is refused like the server refuses it.
 */
function oauthAnswer(provider: keyof typeof MOCK_IDENTITY, code: string | null, good: string) {
  if (code !== good) {
    const refusal =
      provider === 'wechat'
        ? { message: 'the WeChat verification code is wrong or has expired', code: 'wechat_code_invalid' }
        : { message: 'the sign-in link has expired or was already used; start again', code: 'oauth_state_invalid' }
    return HttpResponse.json({ success: false, ...refusal }, { status: 400 })
  }
  const field = `${provider}_id` as const
  if (signedIn) {
    signedIn = { ...signedIn, [field]: MOCK_IDENTITY[provider] }
    return HttpResponse.json({ success: true, message: 'bind', data: signedIn })
  }
  signedIn = { ...mockRoot, [field]: MOCK_IDENTITY[provider] }
  return HttpResponse.json({ success: true, message: '', data: signedIn })
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
  http.get('*/api/oauth/endpoint', ({ request }) => {
    const provider = new URL(request.url).searchParams.get('provider') ?? ''
    if (!['github', 'oidc', 'lark'].includes(provider)) {
      return HttpResponse.json({ success: false, message: 'unknown sign-in provider', code: 'invalid_provider' }, { status: 400 })
    }
    return HttpResponse.json({ success: true, message: '', data: mockAuthorizeUrl(provider) })
  }),
  http.get('*/api/oauth/state', () => {
    issuedStates += 1
    return HttpResponse.json({ success: true, message: '', data: mockIssuedState() })
  }),
  http.get('*/api/oauth/:provider', ({ request, params }) => {
    const provider = String(params.provider)
    const query = new URL(request.url).searchParams
    const code = query.get('code')
    if (provider === 'wechat') {
      // As the server: the code comes with the last state issued to this browser.
      if (issuedStates === 0 || query.get('state') !== mockIssuedState()) {
        return HttpResponse.json(
          { success: false, message: 'this sign-in link has expired, was already used or was started in another browser', code: 'oauth_state_invalid' },
          { status: 403 },
        )
      }
      return oauthAnswer('wechat', code, MOCK_WECHAT_CODE)
    }
    if (provider === 'github' || provider === 'oidc' || provider === 'lark') return oauthAnswer(provider, code, MOCK_OAUTH_CODE)
    return undefined
  }),
  http.post('*/api/user/logout', () => {
    signedIn = null
    return HttpResponse.json({ success: true, message: '' })
  }),
]
