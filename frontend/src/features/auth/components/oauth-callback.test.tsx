import { screen, waitFor } from '@testing-library/react'
import { delay, http, HttpResponse } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MOCK_IDENTITY, MOCK_OAUTH_CODE, mockRoot } from '@/features/auth/mocks/handlers'
import { mockStatus } from '@/features/site/mocks/handlers'
import { sessionStore } from '@/stores/session'
import { ok, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { oauthTiming } from '../api/oauth'

const signIn = (user = mockRoot) => signInAs(user)

/** Every call of GET /api/oauth/{provider}, in order (then on to the handlers below it). */
function recordCalls(provider: string) {
  const calls: URLSearchParams[] = []
  server.use(
    http.get(`*/api/oauth/${provider}`, ({ request }) => {
      calls.push(new URL(request.url).searchParams)
      return undefined
    }),
  )
  return calls
}

const saved = { ...oauthTiming }
beforeEach(() => {
  // Short waits: the retries and the redirect keep their order, the tests stay quick.
  oauthTiming.retryDelay = (n) => n * 150
  oauthTiming.redirectDelay = 300
})
afterEach(() => {
  Object.assign(oauthTiming, saved)
})

describe('third-party sign-in callback', () => {
  it('signs in once (even in StrictMode), loads the user and the groups, and lands on /panel', async () => {
    localStorage.setItem('aff', 'INV1')
    const calls = recordCalls('github')
    renderApp(`/oauth/github?code=${MOCK_OAUTH_CODE}&state=st-1`, { strict: true })
    expect(await screen.findByText('正在完成 GitHub 授权…')).toBeInTheDocument()
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel'))
    expect(await screen.findByText('登录成功！')).toBeInTheDocument()
    expect(calls.map((q) => Object.fromEntries(q))).toEqual([{ code: MOCK_OAUTH_CODE, state: 'st-1', aff: 'INV1' }])
    expect(JSON.parse(localStorage.getItem('user') ?? 'null')).toMatchObject({ id: mockRoot.id, github_id: MOCK_IDENTITY.github })
    await waitFor(() => expect(sessionStore.get().userGroup).not.toBeNull())
    expect(await screen.findByTestId('dashboard-username')).toHaveTextContent('root')
    expect(calls).toHaveLength(1)
  })

  it('a signed-in browser binds the identity: "bound" and on to /panel with the binding in the session', async () => {
    server.use(http.get('*/api/status', () => ok({ ...mockStatus, oidc_auth: true })))
    signIn()
    const calls = recordCalls('oidc')
    renderApp(`/oauth/oidc?code=${MOCK_OAUTH_CODE}&state=st-2`)
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/panel$/))
    expect(await screen.findByText('OpenID Connect 绑定成功！')).toBeInTheDocument()
    expect(screen.queryByText('登录成功！')).not.toBeInTheDocument()
    expect(JSON.parse(localStorage.getItem('user') ?? '{}').oidc_id).toBe(MOCK_IDENTITY.oidc)
    expect(calls).toHaveLength(1)
    // No affiliate code stored: none is sent.
    expect(calls[0]?.has('aff')).toBe(false)
  })

  it.each([
    ['github', true],
    ['lark', false],
  ] as const)('the %s sign-in loads the user groups: %s (spec 4: Lark loads the user only)', async (provider, loadsGroups) => {
    let groupCalls = 0
    server.use(
      http.get('*/api/user_group_map', () => {
        groupCalls += 1
        return undefined
      }),
      // The console's own check of the session never answers here, so whatever asks for the
      // groups is the callback.
      http.get('*/api/user/self', () => delay('infinite')),
    )
    renderApp(`/oauth/${provider}?code=${MOCK_OAUTH_CODE}&state=st-3`)
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel'))
    expect(JSON.parse(localStorage.getItem('user') ?? 'null')).toMatchObject({ [`${provider}_id`]: MOCK_IDENTITY[provider] })
    expect(await screen.findByText('登录成功！')).toBeInTheDocument()
    if (loadsGroups) {
      await waitFor(() => expect(sessionStore.get().userGroup).not.toBeNull())
      expect(groupCalls).toBe(1)
    } else {
      await new Promise((r) => setTimeout(r, 300))
      expect(groupCalls).toBe(0)
      expect(sessionStore.get().userGroup).toBeNull()
    }
  })

  it('a provider error fails at once, without asking the server, and returns to /login', async () => {
    const calls = recordCalls('github')
    renderApp('/oauth/github?error=access_denied&error_description=The+user+has+denied+your+application+access.&state=st-4')
    expect(await screen.findByTestId('oauth-failed')).toHaveTextContent('操作失败，正在重定向至登录页…')
    expect(screen.getByTestId('oauth-reason')).toHaveTextContent('GitHub 未完成授权（access_denied）。')
    expect(screen.queryByText(/denied your application/)).not.toBeInTheDocument()
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(await screen.findByText('错误：GitHub 未完成授权（access_denied）。')).toBeInTheDocument()
    expect(calls).toHaveLength(0)
  })

  it('no code at all fails at once too', async () => {
    const calls = recordCalls('oidc')
    renderApp('/oauth/oidc?state=st-5')
    expect(await screen.findByTestId('oauth-reason')).toHaveTextContent('登录服务商没有返回授权码。')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(calls).toHaveLength(0)
  })

  it('a used or expired state is not retried: the reason is translated and it returns to /login', async () => {
    const calls = recordCalls('github')
    renderApp('/oauth/github?code=stale-code&state=st-6', { strict: true })
    expect(await screen.findByTestId('oauth-reason')).toHaveTextContent('登录链接已过期或已被使用，请重新开始。')
    expect(screen.getByTestId('oauth-failed')).toHaveTextContent('操作失败，正在重定向至登录页…')
    expect(await screen.findByText('错误：登录链接已过期或已被使用，请重新开始。')).toBeInTheDocument()
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(calls).toHaveLength(1)
    expect(screen.queryByTestId('oauth-retry')).not.toBeInTheDocument()
    expect(localStorage.getItem('user')).toBeNull()
  })

  it('an identity bound to someone else is not retried either', async () => {
    let calls = 0
    server.use(
      http.get('*/api/oauth/github', () => {
        calls += 1
        return HttpResponse.json(
          { success: false, message: 'this third-party account is already bound to another user', code: 'oauth_identity_taken' },
          { status: 409 },
        )
      }),
    )
    renderApp(`/oauth/github?code=${MOCK_OAUTH_CODE}&state=st-7`)
    expect(await screen.findByTestId('oauth-reason')).toHaveTextContent('该第三方账号已绑定其他用户。')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(calls).toBe(1)
  })

  it('a provider failure the server reports (502 with a code) is final: the state is spent', async () => {
    let calls = 0
    server.use(
      http.get('*/api/oauth/github', () => {
        calls += 1
        return HttpResponse.json(
          { success: false, message: 'the sign-in provider failed: GitHub refused the code', code: 'oauth_provider_failed' },
          { status: 502 },
        )
      }),
    )
    renderApp(`/oauth/github?code=${MOCK_OAUTH_CODE}&state=st-9`)
    expect(await screen.findByTestId('oauth-failed')).toBeInTheDocument()
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(calls).toBe(1)
    expect(screen.queryByTestId('oauth-retry')).not.toBeInTheDocument()
  })

  it('a 502 from a proxy (no server code) is retried, with a counter, and the second try signs in', async () => {
    oauthTiming.retryDelay = (n) => n * 400
    let calls = 0
    server.use(
      http.get('*/api/oauth/github', () => {
        calls += 1
        if (calls === 1) {
          return new HttpResponse('<html>Bad Gateway</html>', { status: 502, headers: { 'Content-Type': 'text/html' } })
        }
        return undefined
      }),
    )
    renderApp(`/oauth/github?code=${MOCK_OAUTH_CODE}&state=st-8`)
    expect(await screen.findByTestId('oauth-retry')).toHaveTextContent('出现错误，正在重试（1/3）…')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel'))
    expect(calls).toBe(2)
    expect(await screen.findByText('登录成功！')).toBeInTheDocument()
    // Cured by the retry: no error was shown.
    expect(screen.queryByText(/^错误：/)).not.toBeInTheDocument()
  })

  it('gives up after three retries of a network failure and returns to /login', async () => {
    let calls = 0
    server.use(
      http.get('*/api/oauth/lark', () => {
        calls += 1
        return HttpResponse.error()
      }),
    )
    renderApp(`/oauth/lark?code=${MOCK_OAUTH_CODE}&state=st-9`)
    expect(await screen.findByText('出现错误，正在重试（3/3）…')).toBeInTheDocument()
    expect(await screen.findByTestId('oauth-failed')).toBeInTheDocument()
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(calls).toBe(4)
  })
})
