import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MOCK_PASSWORD, mockRoot } from '@/features/auth/mocks/handlers'
import { mockStatus } from '@/features/site/mocks/handlers'
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
