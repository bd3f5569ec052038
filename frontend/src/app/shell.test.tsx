import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { mockStatus } from '@/features/site/mocks/handlers'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { sessionStore, setUser } from '@/stores/session'
import { siteStore } from '@/stores/site'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { jumpTo } from './routes/jump'

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data })
const withStatus = (extra: Record<string, unknown>) =>
  server.use(http.get('*/api/status', () => ok({ ...mockStatus, ...extra })))
const signIn = (role = 100) => {
  const u = { ...mockRoot, role }
  resetAuthMocks(u)
  setUser(u)
}

afterEach(() => vi.restoreAllMocks())

describe('console shell', () => {
  it('breadcrumbs do not repeat the dashboard for the dashboard group', async () => {
    signIn()
    renderApp('/panel/playground')
    const crumbs = await screen.findByTestId('breadcrumbs')
    await waitFor(() => expect(within(crumbs).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['仪表盘', '操练场']))
  })

  it('breadcrumbs name the collapse section, which opens by itself for the current page', async () => {
    signIn()
    renderApp('/panel/pricing')
    const crumbs = await screen.findByTestId('breadcrumbs')
    await waitFor(() => expect(within(crumbs).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['仪表盘', '设置', '运营', '模型价格']))
    const user = userEvent.setup()
    await user.click(screen.getByTestId('sidebar-toggle'))
    const nav = await screen.findByTestId('sidebar-nav')
    expect(within(nav).getByTestId('menu-collapse-operation')).toHaveAttribute('aria-expanded', 'true')
    expect(within(nav).getByTestId('menu-pricing')).toHaveAttribute('aria-current', 'page')
    // The other section stays closed until clicked.
    const payment = within(nav).getByTestId('menu-collapse-payment_settings')
    expect(payment).toHaveAttribute('aria-expanded', 'false')
    expect(within(nav).queryByTestId('menu-redemption')).not.toBeInTheDocument()
    await user.click(payment)
    expect(within(nav).getByTestId('menu-redemption')).toHaveAttribute('href', '/panel/redemption')
    // And the open one closes on click.
    await user.click(within(nav).getByTestId('menu-collapse-operation'))
    expect(within(nav).queryByTestId('menu-pricing')).not.toBeInTheDocument()
  })

  it('an ordinary user on an administrator screen is told so, not sent to not-found', async () => {
    signIn(1)
    renderApp('/panel/channel')
    expect(await screen.findByTestId('no-permission')).toHaveTextContent('无权访问')
    expect(screen.getByTestId('location')).toHaveTextContent('/panel/channel')
    expect(screen.queryByTestId('not-found-title')).not.toBeInTheDocument()
  })

  it('the profile drawer links home, dashboard and profile, offers top-up, and names the group', async () => {
    server.use(http.get('*/api/user_group_map', () => ok({ default: { name: '默认分组', ratio: 1.5, api_rate: 60 } })))
    signIn()
    renderApp('/panel/dashboard')
    await screen.findByTestId('dashboard-username')
    await userEvent.setup().click(screen.getByTestId('profile-avatar'))
    const drawer = await screen.findByTestId('profile-drawer')
    expect(within(drawer).getByTestId('profile-profile')).toHaveAttribute('href', '/panel/profile')
    expect(within(drawer).getByTestId('profile-topup')).toHaveAttribute('href', '/panel/topup')
    expect(await within(drawer).findByTestId('profile-group')).toHaveTextContent('分组：默认分组（倍率 1.5）')
  })

  it('loads the model owners at start into the site store', async () => {
    server.use(http.get('*/api/model_ownedby', () => ok([{ id: 1, name: 'OpenAI', icon: '' }])))
    renderApp('/')
    await waitFor(() => expect(siteStore.get().ownedby).toEqual([{ id: 1, name: 'OpenAI', icon: '' }]))
  })

  it('shows the server message when the model owners cannot be loaded', async () => {
    server.use(
      http.get('*/api/model_ownedby', () => HttpResponse.json({ success: false, message: 'owners are unavailable' }, { status: 503 })),
    )
    renderApp('/')
    expect(await screen.findByText(/owners are unavailable/)).toBeInTheDocument()
  })

  it('hides the logo while the site info loads', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    server.use(
      http.get('*/api/status', async () => {
        await gate
        return ok(mockStatus)
      }),
    )
    renderApp('/')
    expect(await screen.findByTestId('brand-logo-placeholder')).toBeInTheDocument()
    expect(screen.queryByTestId('brand-logo')).not.toBeInTheDocument()
    release()
    expect(await screen.findByTestId('brand-logo')).toBeInTheDocument()
  })
})

describe('public layout', () => {
  it('offers chat to signed-in visitors only', async () => {
    renderApp('/')
    await screen.findByTestId('nav-price')
    expect(screen.queryByTestId('nav-chat')).not.toBeInTheDocument()
    signIn(1)
    renderApp('/about')
    expect((await screen.findAllByTestId('nav-chat'))[0]).toHaveAttribute('href', '/playground')
  })

  it('links the status page in a new tab only while UptimeEnabled', async () => {
    withStatus({ UptimeEnabled: true, UptimeDomain: 'status.example.com', UptimePageName: '' })
    renderApp('/')
    const link = await screen.findByTestId('nav-status')
    expect(link).toHaveAttribute('href', 'https://status.example.com/')
    expect(link).toHaveAttribute('target', '_blank')
    expect(link).toHaveTextContent('服务状态')
  })

  it('has no status link while UptimeEnabled is off', async () => {
    withStatus({ UptimeEnabled: false, UptimeDomain: 'status.example.com' })
    renderApp('/')
    await waitFor(() => expect(siteStore.get().isLoading).toBe(false))
    expect(screen.queryByTestId('nav-status')).not.toBeInTheDocument()
  })

  it('shows the operator footer when set, else credits and the license', async () => {
    renderApp('/')
    const footer = await screen.findByTestId('footer')
    expect(within(footer).getByTestId('footer-credits')).toHaveTextContent('由 Switchboard 团队开发')
    expect(within(footer).getByTestId('footer-license')).toHaveAttribute('href', 'https://opensource.org/license/mit')
    withStatus({ footer_html: '<a href="https://ops.example">Ops Inc.</a>' })
    renderApp('/about')
    await waitFor(() => expect(screen.getAllByTestId('footer').at(-1)).toHaveTextContent('Ops Inc.'))
  })

  it('/playground shows the playground in the public layout for signed-in users', async () => {
    signIn(1)
    renderApp('/playground')
    expect(await screen.findByRole('heading', { level: 1, name: '操练场' })).toBeInTheDocument()
    expect(screen.getByTestId('location')).toHaveTextContent(/^\/playground$/)
    expect(screen.getAllByTestId('footer').length).toBeGreaterThan(0)
  })

  it('/playground sends visitors who are not signed in to the login', async () => {
    renderApp('/playground')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
  })
})

describe('/jump', () => {
  it('goes on by itself to where a configured chat link leads', async () => {
    const go = vi.spyOn(jumpTo, 'go').mockImplementation(() => {})
    withStatus({ chat_links: [{ name: 'OpenCat', url: 'opencat://team/join?domain={server}&token={key}', show: false, sort: 1 }] })
    const target = 'opencat://team/join?domain=https://api.example&token=sk-1'
    renderApp(`/jump?url=${encodeURIComponent(target)}`)
    await waitFor(() => expect(go).toHaveBeenCalledWith(target))
    expect(screen.getByTestId('jump-open')).toHaveAttribute('href', target)
  })

  it('asks before leaving for any other address', async () => {
    const go = vi.spyOn(jumpTo, 'go').mockImplementation(() => {})
    renderApp(`/jump?url=${encodeURIComponent('https://elsewhere.example/x')}`)
    expect(await screen.findByTestId('jump-target')).toHaveTextContent('https://elsewhere.example/x')
    expect(screen.getByTestId('jump-confirm')).toHaveTextContent('即将离开本站')
    expect(go).not.toHaveBeenCalled()
  })

  it('refuses script URLs and a missing address', async () => {
    const go = vi.spyOn(jumpTo, 'go').mockImplementation(() => {})
    renderApp(`/jump?url=${encodeURIComponent('javascript:alert(1)')}`)
    expect(await screen.findByTestId('jump-refused')).toHaveTextContent('此链接无法打开')
    expect(screen.queryByTestId('jump-open')).not.toBeInTheDocument()
    renderApp('/jump')
    expect((await screen.findAllByTestId('jump-refused')).at(-1)).toHaveTextContent('缺少跳转地址')
    expect(go).not.toHaveBeenCalled()
  })
})

describe('session', () => {
  it('a restored session loads the user groups', async () => {
    server.use(http.get('*/api/user_group_map', () => ok({ vip: { name: 'VIP', ratio: 0.8, api_rate: 120 } })))
    signIn()
    renderApp('/panel/dashboard')
    await waitFor(() => expect(sessionStore.get().userGroup).toEqual({ vip: { name: 'VIP', ratio: 0.8, api_rate: 120 } }))
  })
})

describe('profile invitation', () => {
  it('shows the invitation link with this site address, invitees and the reward', async () => {
    withStatus({ server_address: 'https://api.example.com/' })
    const u = { ...mockRoot, role: 1, aff_code: 'Ab12', aff_count: 3, aff_quota: 50 }
    resetAuthMocks(u)
    setUser(u)
    renderApp('/panel/profile')
    const card = await screen.findByTestId('invite-card')
    await waitFor(() => expect(within(card).getByTestId('invite-link')).toHaveValue('https://api.example.com/register?aff=Ab12'))
    expect(within(card).getByTestId('invite-count')).toHaveTextContent('3')
    // 50 units are $0.0001: shown, not rounded away.
    expect(within(card).getByTestId('invite-quota')).toHaveTextContent('$0.0001')
  })

  it('says so when the account has no invitation code', async () => {
    signIn(1)
    renderApp('/panel/profile')
    expect(await screen.findByTestId('invite-none')).toHaveTextContent('此账户还没有邀请码')
  })
})
