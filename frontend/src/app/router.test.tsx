import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'

describe('routes', () => {
  it('home welcomes with the system name and sets the page title', async () => {
    renderApp('/')
    await waitFor(() => expect(screen.getByTestId('home-title')).toHaveTextContent('欢迎使用 Switchboard Test'))
    await waitFor(() => expect(document.title).toBe('Switchboard Test'))
    expect(JSON.parse(localStorage.getItem('siteInfo') ?? '{}')).toMatchObject({ system_name: 'Switchboard Test' })
    expect(screen.getByTestId('footer')).toHaveTextContent('v0.17')
    expect(screen.getByTestId('login-link')).toBeInTheDocument()
  })

  it('falls back to the stored site info and says so when /api/status fails', async () => {
    localStorage.setItem('siteInfo', JSON.stringify({ system_name: 'Stored Name' }))
    const { resetSiteStore } = await import('@/stores/site')
    resetSiteStore()
    server.use(http.get('*/api/status', () => HttpResponse.error()))
    renderApp('/')
    expect(await screen.findByText('无法正常连接至服务器！')).toBeInTheDocument()
    expect(screen.getByTestId('home-title')).toHaveTextContent('欢迎使用 Stored Name')
  })

  it('/panel without a session goes to /login, without an error toast', async () => {
    renderApp('/panel')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(screen.queryByText(/未登录/)).not.toBeInTheDocument()
  })

  it('/panel with a stored user whose session expired clears it and goes to /login', async () => {
    setUser(mockRoot)
    renderApp('/panel')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(localStorage.getItem('user')).toBeNull()
  })

  it('/panel with a live session shows the dashboard; sign out lands on /', async () => {
    resetAuthMocks(mockRoot)
    setUser(mockRoot)
    renderApp('/panel')
    expect(await screen.findByTestId('dashboard-username')).toHaveTextContent('root')

    const user = userEvent.setup()
    await user.click(screen.getByTestId('profile-avatar'))
    await user.click(await screen.findByTestId('sign-out'))
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/$/))
    expect(localStorage.getItem('user')).toBeNull()
    expect(await screen.findByTestId('login-link')).toBeInTheDocument()
  })

  it('/panel shows the console layout: menu, selected item, breadcrumbs, version chip, profile drawer', async () => {
    resetAuthMocks(mockRoot)
    setUser(mockRoot)
    renderApp('/panel/dashboard')
    expect(await screen.findByTestId('dashboard-username')).toHaveTextContent('root')
    expect(within(screen.getByTestId('breadcrumbs')).getByText('仪表盘')).toHaveAttribute('aria-current', 'page')

    // Below 960px (jsdom has no matchMedia) the sidebar is a drawer opened from the header.
    const user = userEvent.setup()
    const toggle = screen.getByTestId('sidebar-toggle')
    expect(toggle).toHaveAttribute('aria-expanded', 'false')
    await user.click(toggle)
    const nav = await screen.findByTestId('sidebar-nav')
    // Root sees every item (the lists grow as screens are added), including the root-only settings.
    expect(within(nav).getAllByRole('link').map((a) => a.textContent)).toEqual(
      expect.arrayContaining(['仪表盘', '令牌', '日志', '系统设置']),
    )
    expect(within(nav).getByText('设置')).toBeInTheDocument()
    expect(within(nav).getByText('使用情况')).toBeInTheDocument()
    expect(screen.getByTestId('menu-dashboard')).toHaveAttribute('aria-current', 'page')
    expect(screen.getByTestId('menu-token')).not.toHaveAttribute('aria-current')
    expect(screen.getByTestId('version-chip')).toHaveTextContent('v0.17')
    await user.keyboard('{Escape}')
    await waitFor(() => expect(screen.queryByTestId('sidebar-nav')).not.toBeInTheDocument())

    await user.click(screen.getByTestId('profile-avatar'))
    const drawer = await screen.findByTestId('profile-drawer')
    expect(within(drawer).getByTestId('profile-home')).toHaveAttribute('href', '/')
    expect(within(drawer).getByTestId('profile-dashboard')).toHaveAttribute('href', '/panel/dashboard')
    expect(within(drawer).getByTestId('sign-out')).toBeInTheDocument()
  })

  it('unknown paths show the not-found page', async () => {
    renderApp('/no/such/page')
    expect(await screen.findByTestId('not-found-title')).toHaveTextContent('页面不存在')
    renderApp('/404')
    expect(await screen.findAllByTestId('not-found-title')).toHaveLength(2)
  })

  it('theme toggle sets the dark class and remembers it', async () => {
    renderApp('/')
    await userEvent.setup().click(await screen.findByTestId('theme-toggle'))
    expect(document.documentElement).toHaveClass('dark')
    expect(localStorage.getItem('theme')).toBe('dark')
  })

  it('language switcher changes the interface language', async () => {
    renderApp('/')
    const user = userEvent.setup()
    await user.click(await screen.findByTestId('language-switcher'))
    await user.click(await screen.findByRole('menuitemradio', { name: 'English' }))
    await waitFor(() => expect(screen.getByTestId('home-title')).toHaveTextContent('Welcome to Switchboard Test'))
    expect(screen.getByTestId('login-link')).toHaveTextContent('Log in')
  })

  it("a signed-in user's language choice is stored on the account (mails are written in it)", async () => {
    const sent: unknown[] = []
    server.use(
      http.put('*/api/user/self', async ({ request }) => {
        const body = (await request.json()) as { language: string }
        sent.push(body)
        return HttpResponse.json({ success: true, message: '', data: { ...mockRoot, language: body.language } })
      }),
    )
    setUser(mockRoot)
    renderApp('/')
    const user = userEvent.setup()
    await user.click(await screen.findByTestId('language-switcher'))
    await user.click(await screen.findByRole('menuitemradio', { name: '日本語' }))
    await waitFor(() => expect(sent).toEqual([{ language: 'ja' }]))
    await waitFor(() => expect(JSON.parse(localStorage.getItem('user') ?? '{}')).toMatchObject({ language: 'ja' }))
  })
})
