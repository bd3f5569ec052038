import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { MOCK_IDENTITY, MOCK_WECHAT_CODE, mockAuthorizeUrl, mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { mockStatus } from '@/features/site/mocks/handlers'
import { browser } from '@/lib/oauth'
import { sessionStore } from '@/stores/session'
import type { SiteInfo, User } from '@/types/api'
import { ok, openDialog, recordBodies, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { ACCESS_TOKEN } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

const signIn = (user: User = mockRoot) => signInAs(user)

describe('profile screen', () => {
  it('binds an e-mail address with the code sent there; a wrong code is told in Chinese', async () => {
    const sent: unknown[] = []
    const binds: unknown[] = []
    server.use(
      http.post('*/api/user/email/code', async ({ request }) => {
        sent.push(await request.json())
        return HttpResponse.json({ success: true, message: 'if the address can be bound, a code has been sent to it' })
      }),
      http.post('*/api/user/email/bind', async ({ request }) => {
        const body = (await request.json()) as { email: string; code: string }
        binds.push(body)
        if (body.code !== '123456') {
          return HttpResponse.json(
            { success: false, message: 'the verification code is wrong or has expired', code: 'invalid_verification_code' },
            { status: 400 },
          )
        }
        return ok({ ...mockRoot, email: body.email })
      }),
    )
    signIn()
    renderApp('/panel/profile')
    const card = await screen.findByTestId('email-binding')
    expect(within(card).getByTestId('email-current')).toHaveTextContent('未绑定')
    const user = userEvent.setup()
    const address = within(card).getByLabelText('邮箱地址')
    await user.type(address, 'not-an-address')
    await user.click(within(card).getByTestId('email-send-code'))
    expect(await within(card).findByText('请输入有效的邮箱地址')).toBeInTheDocument()
    expect(sent).toEqual([])

    await user.clear(address)
    await user.type(address, 'me@example.com')
    await user.click(within(card).getByTestId('email-send-code'))
    await waitFor(() => expect(sent).toEqual([{ email: 'me@example.com' }]))
    // No second code for a minute.
    expect(await within(card).findByText(/秒后可重发/)).toBeInTheDocument()
    expect(within(card).getByTestId('email-send-code')).toBeDisabled()

    await user.click(within(card).getByTestId('email-bind'))
    expect(await within(card).findByText('请输入验证码')).toBeInTheDocument()
    await user.type(within(card).getByLabelText('验证码'), '000000')
    await user.click(within(card).getByTestId('email-bind'))
    expect(await screen.findByText('错误：验证码错误或已过期。')).toBeInTheDocument()
    expect(screen.queryByText(/the verification code is wrong/)).not.toBeInTheDocument()
    expect(within(card).getByTestId('email-current')).toHaveTextContent('未绑定')

    await user.clear(within(card).getByLabelText('验证码'))
    await user.type(within(card).getByLabelText('验证码'), '123456')
    await user.click(within(card).getByTestId('email-bind'))
    await waitFor(() => expect(within(card).getByTestId('email-current')).toHaveTextContent('me@example.com'))
    expect(binds).toEqual([
      { email: 'me@example.com', code: '000000' },
      { email: 'me@example.com', code: '123456' },
    ])
    expect(sessionStore.get().user?.email).toBe('me@example.com')
    // Changing it again asks for the new address.
    expect(within(card).getByLabelText('新邮箱地址')).toHaveValue('')
  })

  it('shows the user and saves the personal information', async () => {
    const body = recordBodies('put', '*/api/user/self', { ...mockRoot, username: 'rooty', display_name: 'R' })
    signIn()
    renderApp('/panel/profile')
    const form = await screen.findByTestId('profile-info-form')
    const username = within(form).getByLabelText('用户名')
    expect(username).toHaveValue('root')
    expect(within(form).getByLabelText('显示名称')).toHaveValue('Root User')
    expect(within(form).getByTestId('profile-email')).toHaveTextContent('未绑定')

    const user = userEvent.setup()
    await user.clear(username)
    await user.type(username, 'ab')
    await user.click(within(form).getByTestId('profile-info-submit'))
    expect(await within(form).findByText('用户名至少 3 个字符')).toBeInTheDocument()
    expect(body.at(-1)).toBeUndefined()

    await user.clear(username)
    await user.type(username, ' rooty ')
    await user.clear(within(form).getByLabelText('显示名称'))
    await user.type(within(form).getByLabelText('显示名称'), 'R')
    await user.click(within(form).getByTestId('profile-info-submit'))
    await waitFor(() => expect(body.at(-1)).toEqual({ username: 'rooty', display_name: 'R' }))
    expect(await screen.findByText('个人信息已保存')).toBeInTheDocument()
    await waitFor(() => expect(sessionStore.get().user?.username).toBe('rooty'))
  })

  it('changes the password with the current one; mismatch and short passwords are refused', async () => {
    const body = recordBodies('put', '*/api/user/self', mockRoot)
    signIn()
    renderApp('/panel/profile')
    const form = await screen.findByTestId('profile-password-form')
    const user = userEvent.setup()
    await user.type(within(form).getByLabelText('新密码'), 'short')
    await user.type(within(form).getByLabelText('确认新密码'), 'other')
    await user.click(within(form).getByTestId('profile-password-submit'))
    expect(await within(form).findByText('请输入当前密码')).toBeInTheDocument()
    expect(within(form).getByText('密码至少 8 个字符')).toBeInTheDocument()
    expect(within(form).getByText('两次输入的密码不一致')).toBeInTheDocument()
    expect(body.at(-1)).toBeUndefined()

    await user.type(within(form).getByLabelText('当前密码'), 'old-password')
    await user.clear(within(form).getByLabelText('新密码'))
    await user.type(within(form).getByLabelText('新密码'), 'new-password-1')
    await user.clear(within(form).getByLabelText('确认新密码'))
    await user.type(within(form).getByLabelText('确认新密码'), 'new-password-1')
    await user.click(within(form).getByTestId('profile-password-submit'))
    await waitFor(() => expect(body.at(-1)).toEqual({ password: 'new-password-1', original_password: 'old-password' }))
    expect(await screen.findByText('密码已修改')).toBeInTheDocument()
    await waitFor(() => expect(within(form).getByLabelText('当前密码')).toHaveValue(''))
  })

  it('a wrong current password is shown by the central handler', async () => {
    signIn()
    renderApp('/panel/profile')
    const form = await screen.findByTestId('profile-password-form')
    const user = userEvent.setup()
    await user.type(within(form).getByLabelText('当前密码'), 'wrong-one')
    await user.type(within(form).getByLabelText('新密码'), 'new-password-1')
    await user.type(within(form).getByLabelText('确认新密码'), 'new-password-1')
    await user.click(within(form).getByTestId('profile-password-submit'))
    expect(await screen.findByText(/错误：当前密码不正确/)).toBeInTheDocument()
  })

  it('generates an access token and shows it once', async () => {
    signIn()
    renderApp('/panel/profile')
    const card = await screen.findByTestId('access-token-card')
    expect(within(card).getByTestId('access-token-state')).toHaveTextContent('还没有生成访问令牌')
    const user = userEvent.setup()
    await user.click(within(card).getByTestId('access-token-generate'))
    expect(await within(card).findByTestId('access-token-value')).toHaveValue(ACCESS_TOKEN)
    // A second one asks first.
    await user.click(within(card).getByTestId('access-token-generate'))
    expect(await screen.findByTestId('access-token-confirm')).toBeInTheDocument()
  })
})

/** The site status with some sign-in methods switched on. */
function withStatus(flags: Partial<SiteInfo>) {
  server.use(http.get('*/api/status', () => ok({ ...mockStatus, ...flags })))
}

const ALL_ON: Partial<SiteInfo> = {
  github_oauth: true,
  oidc_auth: true,
  lark_login: true,
  wechat_login: true,
  wechat_qrcode: 'https://example.com/qr.png',
}

describe('account binding', () => {
  it("lists each method with the user's identity; nothing to bind while the site offers none", async () => {
    signIn({ ...mockRoot, email: 'me@example.com', github_id: 'gh-42', wechat_id: 'wx-7', oidc_id: '', lark_id: '', telegram_id: 0 })
    renderApp('/panel/profile')
    const card = await screen.findByTestId('account-binding')
    const status = (method: string) => within(card).getByTestId(`binding-${method}-status`)
    expect(status('email')).toHaveTextContent('已绑定me@example.com')
    expect(status('github')).toHaveTextContent('已绑定gh-42')
    expect(status('oidc')).toHaveTextContent('未绑定')
    expect(status('lark')).toHaveTextContent('未绑定')
    expect(status('wechat')).toHaveTextContent('已绑定wx-7')
    expect(status('telegram')).toHaveTextContent('未绑定')
    expect(within(card).getByTestId('binding-oidc')).toHaveTextContent('OpenID Connect')
    expect(within(card).getByTestId('binding-lark')).toHaveTextContent('飞书')

    // Off on the site: no Bind anywhere; what is bound can still be unbound.
    expect(within(card).queryByRole('button', { name: '绑定' })).not.toBeInTheDocument()
    expect(within(card).getByTestId('binding-oidc-off')).toHaveTextContent('本站未开启')
    expect(within(card).getByTestId('binding-lark-off')).toHaveTextContent('本站未开启')
    expect(within(card).getByTestId('binding-github-unbind')).toHaveTextContent('解除绑定')
    expect(within(card).getByTestId('binding-wechat-unbind')).toBeInTheDocument()
    expect(within(card).getByTestId('binding-telegram-later')).toHaveTextContent('Telegram 机器人配置后可用')
    expect(within(card).getByTestId('binding-telegram')).not.toHaveTextContent('解除绑定')

    // The e-mail row leads to the e-mail card.
    const user = userEvent.setup()
    await user.click(within(card).getByTestId('binding-email-edit'))
    expect(within(screen.getByTestId('email-binding')).getByLabelText('新邮箱地址')).toHaveFocus()
  })

  it('binds through the provider (GitHub) or with the WeChat code when the site offers them', async () => {
    const assign = vi.spyOn(browser, 'assign').mockImplementation(() => {})
    signIn()
    withStatus(ALL_ON)
    const asked: (string | null)[] = []
    server.use(
      http.get('*/api/oauth/endpoint', ({ request }) => {
        asked.push(new URL(request.url).searchParams.get('provider'))
        return undefined
      }),
    )
    renderApp('/panel/profile')
    const card = await screen.findByTestId('account-binding')
    for (const method of ['github', 'oidc', 'lark', 'wechat']) {
      expect(await within(card).findByTestId(`binding-${method}-bind`)).toHaveTextContent('绑定')
    }
    expect(within(card).queryByTestId('binding-telegram-bind')).not.toBeInTheDocument()

    const user = userEvent.setup()
    await user.click(within(card).getByTestId('binding-wechat-bind'))
    const dialog = await screen.findByTestId('wechat-dialog')
    expect(within(dialog).getByRole('img')).toHaveAttribute('src', 'https://example.com/qr.png')
    await user.type(within(dialog).getByLabelText('验证码'), MOCK_WECHAT_CODE)
    await user.click(within(dialog).getByRole('button', { name: '绑定' }))
    expect(await screen.findByText('微信 绑定成功！')).toBeInTheDocument()
    await waitFor(() => expect(within(card).getByTestId('binding-wechat-status')).toHaveTextContent(`已绑定${MOCK_IDENTITY.wechat}`))
    expect(screen.queryByTestId('wechat-dialog')).not.toBeInTheDocument()
    expect(sessionStore.get().user?.wechat_id).toBe(MOCK_IDENTITY.wechat)
    expect(within(card).getByTestId('binding-wechat-unbind')).toBeInTheDocument()

    expect(asked).toEqual([])
    await user.click(within(card).getByTestId('binding-github-bind'))
    await waitFor(() => expect(assign).toHaveBeenCalledWith(mockAuthorizeUrl('github')))
    expect(asked).toEqual(['github'])
    // The page is leaving for GitHub: nothing else starts meanwhile.
    expect(within(card).getByTestId('binding-oidc-bind')).toBeDisabled()
  })

  it('Telegram: an unbound user is shown the bot and the steps; binding is read back from the server', async () => {
    signIn({ ...mockRoot, telegram_id: 0 })
    withStatus({ telegram_bot: 'switchboard_bot' })
    renderApp('/panel/profile')
    const card = await screen.findByTestId('account-binding')
    expect(within(card).getByTestId('binding-telegram-status')).toHaveTextContent('未绑定')
    expect(within(card).queryByTestId('binding-telegram-later')).not.toBeInTheDocument()
    // The site's bot has its own entry.
    expect(await screen.findByTestId('telegram-bot-link')).toHaveAttribute('href', 'https://t.me/switchboard_bot')
    expect(screen.getByTestId('telegram-bot-link')).toHaveAttribute('target', '_blank')
    expect(screen.getByTestId('telegram-bot-card')).toHaveTextContent('打开 @switchboard_bot')

    const user = userEvent.setup()
    await user.click(await within(card).findByTestId('binding-telegram-bind'))
    const dialog = await screen.findByTestId('telegram-bind-dialog')
    const open = within(dialog).getByTestId('telegram-bind-open')
    expect(open).toHaveAttribute('href', 'https://t.me/switchboard_bot')
    expect(open).toHaveAttribute('target', '_blank')
    expect(open).toHaveAttribute('rel', 'noopener noreferrer')
    expect(dialog).toHaveTextContent('/bind')
    expect(dialog).toHaveTextContent('访问令牌')

    // Not bound yet in Telegram: said so, the steps stay open.
    await user.click(within(dialog).getByTestId('telegram-bind-check'))
    expect(await screen.findByText('还没有检测到绑定，请按上面的步骤完成后再试。')).toBeInTheDocument()
    expect(screen.getByTestId('telegram-bind-dialog')).toBeInTheDocument()

    // Bound in Telegram meanwhile: the account is read again.
    resetAuthMocks({ ...mockRoot, telegram_id: 987654321 })
    await user.click(within(dialog).getByTestId('telegram-bind-check'))
    expect(await screen.findByText('Telegram 绑定成功！')).toBeInTheDocument()
    await waitFor(() => expect(within(card).getByTestId('binding-telegram-status')).toHaveTextContent('已绑定987654321'))
    expect(screen.queryByTestId('telegram-bind-dialog')).not.toBeInTheDocument()
    expect(within(card).getByTestId('binding-telegram-unbind')).toBeInTheDocument()
  })

  it('Telegram: the steps lead to the access token section', async () => {
    signIn({ ...mockRoot, telegram_id: 0 })
    withStatus({ telegram_bot: '@switchboard_bot' })
    const { user, dialog } = await openDialog('/panel/profile', 'binding-telegram-bind', 'telegram-bind-dialog')
    expect(within(dialog).getByTestId('telegram-bind-open')).toHaveAttribute('href', 'https://t.me/switchboard_bot')
    await user.click(within(dialog).getByTestId('telegram-bind-token'))
    await waitFor(() => expect(screen.queryByTestId('telegram-bind-dialog')).not.toBeInTheDocument())
    expect(within(screen.getByTestId('access-token-card')).getByTestId('access-token-generate')).toHaveFocus()
  })

  it('Telegram: a bound user sees the id and unbinds it', async () => {
    signIn({ ...mockRoot, telegram_id: 123456789 })
    withStatus({ telegram_bot: 'switchboard_bot' })
    const deleted: string[] = []
    server.events.on('request:start', ({ request }) => {
      if (request.method === 'DELETE') deleted.push(new URL(request.url).pathname)
    })
    renderApp('/panel/profile')
    const card = await screen.findByTestId('account-binding')
    expect(within(card).getByTestId('binding-telegram-status')).toHaveTextContent('已绑定123456789')
    const user = userEvent.setup()
    await user.click(await within(card).findByTestId('binding-telegram-unbind'))
    const confirm = await screen.findByTestId('binding-unbind-confirm')
    expect(confirm).toHaveTextContent('解除 Telegram 绑定？')
    await user.click(within(confirm).getByTestId('binding-unbind-confirm-confirm'))
    await waitFor(() => expect(within(card).getByTestId('binding-telegram-status')).toHaveTextContent('未绑定'))
    expect(deleted).toEqual(['/api/user/binding/telegram'])
    expect(await screen.findByText('已解除 Telegram 绑定')).toBeInTheDocument()
    expect(sessionStore.get().user?.telegram_id).toBe(0)
    // The bot is there, so it can be bound again.
    expect(within(card).getByTestId('binding-telegram-bind')).toBeInTheDocument()
    server.events.removeAllListeners()
  })

  it('unbinds after a confirmation; the last way to sign in is refused in Chinese', async () => {
    signIn({ ...mockRoot, github_id: 'gh-42', wechat_id: 'wx-7' })
    withStatus(ALL_ON)
    const deleted: string[] = []
    server.use(
      http.delete('*/api/user/binding/:provider', ({ request, params }) => {
        deleted.push(`${request.method} ${new URL(request.url).pathname}`)
        if (params.provider === 'wechat') {
          return HttpResponse.json(
            { success: false, message: 'cannot unbind the only way left to sign in', code: 'binding_last_method' },
            { status: 409 },
          )
        }
        return undefined
      }),
    )
    renderApp('/panel/profile')
    const card = await screen.findByTestId('account-binding')
    const user = userEvent.setup()

    await user.click(within(card).getByTestId('binding-github-unbind'))
    const confirm = await screen.findByTestId('binding-unbind-confirm')
    expect(confirm).toHaveTextContent('解除 GitHub 绑定？')
    expect(deleted).toEqual([])
    await user.click(within(confirm).getByTestId('binding-unbind-confirm-confirm'))
    await waitFor(() => expect(within(card).getByTestId('binding-github-status')).toHaveTextContent('未绑定'))
    expect(deleted).toEqual(['DELETE /api/user/binding/github'])
    expect(await screen.findByText('已解除 GitHub 绑定')).toBeInTheDocument()
    expect(sessionStore.get().user?.github_id).toBe('')
    // Offered on the site, so it can be bound again.
    expect(within(card).getByTestId('binding-github-bind')).toBeInTheDocument()

    await user.click(within(card).getByTestId('binding-wechat-unbind'))
    await user.click(within(await screen.findByTestId('binding-unbind-confirm')).getByTestId('binding-unbind-confirm-confirm'))
    expect(await screen.findByText('错误：这是此账号唯一的登录方式，不能解除。请先设置密码或绑定其他登录方式。')).toBeInTheDocument()
    expect(screen.queryByText(/only way left/)).not.toBeInTheDocument()
    expect(deleted).toEqual(['DELETE /api/user/binding/github', 'DELETE /api/user/binding/wechat'])
    expect(within(card).getByTestId('binding-wechat-status')).toHaveTextContent('已绑定wx-7')
  })
})
