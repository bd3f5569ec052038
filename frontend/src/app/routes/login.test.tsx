import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MOCK_IDENTITY, MOCK_PASSWORD, MOCK_WECHAT_CODE, mockAuthorizeUrl, mockRoot } from '@/features/auth/mocks/handlers'
import { mockStatus } from '@/features/site/mocks/handlers'
import { browser } from '@/lib/oauth'
import type { SiteInfo } from '@/types/api'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { sessionStore } from '@/stores/session'

async function fillAndSubmit(username: string, password: string) {
  const user = userEvent.setup()
  await user.type(await screen.findByLabelText('用户名 / 邮箱'), username)
  if (password) await user.type(screen.getByLabelText('密码'), password)
  await user.click(screen.getByRole('button', { name: '登录' }))
  return user
}

describe('login page', () => {
  it('shows translated validation messages and sends nothing when empty', async () => {
    let called = false
    server.use(
      http.post('*/api/user/login', () => {
        called = true
        return HttpResponse.json({ success: true, message: '' })
      }),
    )
    renderApp('/login')
    const user = userEvent.setup()
    await user.click(await screen.findByRole('button', { name: '登录' }))
    expect(await screen.findByText('请输入用户名或邮箱')).toBeInTheDocument()
    expect(screen.getByText('请输入密码')).toBeInTheDocument()
    expect(screen.getByLabelText('用户名 / 邮箱')).toHaveAttribute('aria-invalid', 'true')
    expect(called).toBe(false)
  })

  it('posts {username, password}, stores the user and lands on /panel', async () => {
    let body: unknown
    server.use(
      http.post('*/api/user/login', async ({ request }) => {
        body = await request.json()
        return HttpResponse.json({ success: true, message: '', data: mockRoot })
      }),
    )
    // After login the guard asks /api/user/self.
    server.use(http.get('*/api/user/self', () => HttpResponse.json({ success: true, message: '', data: mockRoot })))

    renderApp('/login')
    await fillAndSubmit(' root ', MOCK_PASSWORD)

    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel'))
    expect(body).toEqual({ username: 'root', password: MOCK_PASSWORD })
    expect(JSON.parse(localStorage.getItem('user') ?? 'null')).toMatchObject({ id: 1, username: 'root' })

    const card = await screen.findByTestId('account-card')
    expect(within(card).getByTestId('dashboard-username')).toHaveTextContent('root')
    expect(within(card).getByTestId('dashboard-role')).toHaveTextContent('超级管理员')
    // Status says display_in_currency with 500000 per unit: 250000000 -> $500.00.
    await waitFor(() => expect(within(card).getByTestId('dashboard-quota')).toHaveTextContent('$500.00'))
    expect(await screen.findByText('登录成功！')).toBeInTheDocument()
    // The user groups are loaded with the user (spec 4).
    await waitFor(() => expect(sessionStore.get().userGroup).not.toBeNull())
  })

  it('shows the server message once on failure and stays on /login', async () => {
    renderApp('/login')
    await fillAndSubmit('root', 'wrong-password')

    expect(await screen.findByText('错误：用户名或密码错误，或用户已被封禁')).toBeInTheDocument()
    expect(screen.getAllByText(/用户名或密码错误/)).toHaveLength(1)
    expect(screen.getByTestId('location')).toHaveTextContent('/login')
    expect(localStorage.getItem('user')).toBeNull()
    expect(screen.getByLabelText('密码')).toHaveValue('')
  })

  describe('with the Turnstile check on', () => {
    afterEach(() => {
      delete window.turnstile
    })

    it('sends a fresh widget token with each attempt and translates the refusal', async () => {
      // A stand-in for Cloudflare's widget: a token at once, a new one after each reset.
      let issued = 0
      let callback: ((token: string) => void) | undefined
      const reset = vi.fn(() => setTimeout(() => callback?.(`tok-${++issued}`)))
      window.turnstile = {
        render: vi.fn((_el: HTMLElement, options: { sitekey: string; callback: (token: string) => void }) => {
          expect(options.sitekey).toBe('site-key-1')
          callback = options.callback
          setTimeout(() => callback?.(`tok-${++issued}`))
          return 'widget-1'
        }),
        reset,
        remove: vi.fn(),
      }
      server.use(
        http.get('*/api/status', () =>
          HttpResponse.json({ success: true, message: '', data: { ...mockStatus, turnstile_check: true, turnstile_site_key: 'site-key-1' } }),
        ),
      )
      const tokens: (string | null)[] = []
      server.use(
        http.post('*/api/user/login', ({ request }) => {
          tokens.push(new URL(request.url).searchParams.get('turnstile'))
          if (tokens.length === 1)
            return HttpResponse.json(
              { success: false, message: 'the human check (Turnstile) failed; refresh it and try again', code: 'turnstile_failed' },
              { status: 403 },
            )
          return HttpResponse.json({ success: true, message: '', data: mockRoot })
        }),
        http.get('*/api/user/self', () => HttpResponse.json({ success: true, message: '', data: mockRoot })),
      )
      renderApp('/login')
      expect(await screen.findByTestId('turnstile-widget')).toBeInTheDocument()
      await waitFor(() => expect(screen.getByRole('button', { name: '登录' })).toBeEnabled())
      const user = await fillAndSubmit('root', MOCK_PASSWORD)
      expect(await screen.findByText('错误：人机验证失败，请刷新后重试。')).toBeInTheDocument()
      expect(reset).toHaveBeenCalledWith('widget-1')
      await waitFor(() => expect(screen.getByRole('button', { name: '登录' })).toBeEnabled())
      await user.type(screen.getByLabelText('密码'), MOCK_PASSWORD)
      await user.click(screen.getByRole('button', { name: '登录' }))
      await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel'))
      expect(tokens).toEqual(['tok-1', 'tok-2'])
    })
  })

  it('reports HTTP errors through the central handler', async () => {
    server.use(http.post('*/api/user/login', () => new HttpResponse(null, { status: 429 })))
    renderApp('/login')
    await fillAndSubmit('root', 'x')
    expect(await screen.findByText('错误：请求次数过多，请稍后再试！')).toBeInTheDocument()
  })
})

/** The site status with some sign-in methods switched on. */
function withStatus(flags: Partial<SiteInfo>) {
  server.use(http.get('*/api/status', () => HttpResponse.json({ success: true, message: '', data: { ...mockStatus, ...flags } })))
}

describe('third-party sign-in on the login page', () => {
  it('offers none while the site has none switched on', async () => {
    renderApp('/login')
    // The status has arrived (its system name is shown) and still no button.
    expect(await screen.findByText('登录 Switchboard Test 以管理您的令牌与额度')).toBeInTheDocument()
    expect(screen.getByRole('button', { name: '登录' })).toBeInTheDocument()
    expect(screen.queryByTestId('oauth-buttons')).not.toBeInTheDocument()
    expect(screen.queryByRole('button', { name: /^使用 .+ 登录$/ })).not.toBeInTheDocument()
  })

  it('shows exactly the methods the site switched on', async () => {
    withStatus({ github_oauth: true, lark_login: true })
    renderApp('/login')
    expect(await screen.findByRole('button', { name: '使用 GitHub 登录' })).toBeEnabled()
    expect(screen.getByRole('button', { name: '使用 飞书 登录' })).toBeEnabled()
    expect(screen.queryByRole('button', { name: '使用 OpenID Connect 登录' })).not.toBeInTheDocument()
    expect(screen.queryByRole('button', { name: '使用 微信 登录' })).not.toBeInTheDocument()
  })

  it('all four, when all are on', async () => {
    withStatus({ github_oauth: true, oidc_auth: true, lark_login: true, wechat_login: true })
    renderApp('/login')
    const group = await screen.findByTestId('oauth-buttons')
    expect(within(group).getAllByRole('button').map((b) => b.textContent)).toEqual([
      '使用 GitHub 登录',
      '使用 OpenID Connect 登录',
      '使用 飞书 登录',
      '使用 微信 登录',
    ])
  })

  it('GitHub: asks the server for the authorize URL once and goes there', async () => {
    const assign = vi.spyOn(browser, 'assign').mockImplementation(() => {})
    const asked: (string | null)[] = []
    withStatus({ github_oauth: true, oidc_auth: true })
    server.use(
      http.get('*/api/oauth/endpoint', ({ request }) => {
        asked.push(new URL(request.url).searchParams.get('provider'))
        return undefined // on to the default handler
      }),
    )
    renderApp('/login')
    const button = await screen.findByRole('button', { name: '使用 GitHub 登录' })
    const user = userEvent.setup()
    await user.dblClick(button)
    await waitFor(() => expect(assign).toHaveBeenCalledWith(mockAuthorizeUrl('github')))
    expect(asked).toEqual(['github'])
    expect(assign).toHaveBeenCalledTimes(1)
    // The page is leaving: no second start meanwhile.
    expect(button).toBeDisabled()
    expect(screen.getByRole('button', { name: '使用 OpenID Connect 登录' })).toBeDisabled()
  })

  it('OpenID Connect: a refusal is translated and the buttons work again', async () => {
    const assign = vi.spyOn(browser, 'assign').mockImplementation(() => {})
    withStatus({ oidc_auth: true })
    server.use(
      http.get('*/api/oauth/endpoint', () =>
        HttpResponse.json(
          { success: false, message: 'the administrator has not finished configuring this sign-in method', code: 'oauth_not_configured' },
          { status: 503 },
        ),
      ),
    )
    renderApp('/login')
    const user = userEvent.setup()
    await user.click(await screen.findByRole('button', { name: '使用 OpenID Connect 登录' }))
    expect(await screen.findByText('错误：管理员尚未完成此登录方式的配置。')).toBeInTheDocument()
    expect(assign).not.toHaveBeenCalled()
    await waitFor(() => expect(screen.getByRole('button', { name: '使用 OpenID Connect 登录' })).toBeEnabled())
  })

  it('Lark opens a new window; a blocked popup falls back to this window', async () => {
    const assign = vi.spyOn(browser, 'assign').mockImplementation(() => {})
    const popup = { opener: window } as unknown as Window
    const open = vi.spyOn(browser, 'open').mockReturnValueOnce(popup).mockReturnValueOnce(null)
    withStatus({ lark_login: true })
    renderApp('/login')
    const user = userEvent.setup()
    const button = await screen.findByRole('button', { name: '使用 飞书 登录' })
    await user.click(button)
    await waitFor(() => expect(open).toHaveBeenCalledWith(mockAuthorizeUrl('lark')))
    expect(popup.opener).toBeNull()
    expect(assign).not.toHaveBeenCalled()
    // This page stays: the button can be used again (here the popup is blocked).
    await waitFor(() => expect(button).toBeEnabled())
    await user.click(button)
    await waitFor(() => expect(assign).toHaveBeenCalledWith(mockAuthorizeUrl('lark')))
    expect(open).toHaveBeenCalledTimes(2)
  })

  it('WeChat: shows the QR code, refuses a wrong code in Chinese, signs in with the right one and a state', async () => {
    localStorage.setItem('aff', 'INV1')
    withStatus({ wechat_login: true, wechat_qrcode: 'https://example.com/qr.png' })
    const asked: URLSearchParams[] = []
    server.use(
      http.get('*/api/oauth/wechat', ({ request }) => {
        asked.push(new URL(request.url).searchParams)
        return undefined
      }),
    )
    renderApp('/login')
    const user = userEvent.setup()
    await user.click(await screen.findByRole('button', { name: '使用 微信 登录' }))
    const dialog = await screen.findByTestId('wechat-dialog')
    expect(within(dialog).getByRole('img', { name: '微信公众号二维码' })).toHaveAttribute('src', 'https://example.com/qr.png')
    expect(within(dialog).getByText('向公众号发送“验证码”。')).toBeInTheDocument()

    await user.click(within(dialog).getByRole('button', { name: '登录' }))
    expect(await within(dialog).findByText('请输入验证码')).toBeInTheDocument()
    expect(asked).toHaveLength(0)

    await user.type(within(dialog).getByLabelText('验证码'), '000000')
    await user.click(within(dialog).getByRole('button', { name: '登录' }))
    expect(await screen.findByText('错误：微信验证码错误或已过期。')).toBeInTheDocument()
    expect(screen.queryByText(/wrong or has expired/)).not.toBeInTheDocument()
    expect(screen.getByTestId('wechat-dialog')).toBeInTheDocument()
    expect(screen.getByTestId('location')).toHaveTextContent('/login')

    await user.clear(within(dialog).getByLabelText('验证码'))
    await user.type(within(dialog).getByLabelText('验证码'), ` ${MOCK_WECHAT_CODE} `)
    await user.click(within(dialog).getByRole('button', { name: '登录' }))
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel'))
    expect(await screen.findByText('登录成功！')).toBeInTheDocument()
    // Each code goes with a fresh state issued to this browser (GET /api/oauth/state).
    expect(asked.map((q) => [q.get('code'), q.get('state'), q.get('aff')])).toEqual([
      ['000000', 'st-1', 'INV1'],
      [MOCK_WECHAT_CODE, 'st-2', 'INV1'],
    ])
    expect(JSON.parse(localStorage.getItem('user') ?? 'null')).toMatchObject({ id: mockRoot.id, wechat_id: MOCK_IDENTITY.wechat })
    await waitFor(() => expect(sessionStore.get().userGroup).not.toBeNull())
    expect(await screen.findByTestId('dashboard-username')).toHaveTextContent('root')
  })
})
