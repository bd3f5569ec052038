import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { afterEach, describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { ok, openDialog, openScreen } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockTelegramMenu, resetTelegramMocks, telegramHandlers } from '../mocks/handlers'
import type { TelegramStatus } from '../types'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

function signIn(role = 100) {
  const u = { ...mockRoot, role }
  resetAuthMocks(u)
  setUser(u)
  server.use(...telegramHandlers)
}

/** The bodies of every POST and PUT to /api/option/telegram. */
function recordWrites() {
  const writes: { method: string; body: unknown }[] = []
  server.events.on('request:start', async ({ request }) => {
    if (new URL(request.url).pathname !== '/api/option/telegram' || !['POST', 'PUT'].includes(request.method)) return
    writes.push({ method: request.method, body: await request.clone().json() })
  })
  return writes
}

afterEach(() => server.events.removeAllListeners())

const pricing = mockTelegramMenu({ id: 1, command: 'pricing', description: '查看模型价格' })
const support = mockTelegramMenu({
  id: 2,
  command: 'support',
  description: '联系客服',
  parse_mode: 'HTML',
  reply_message: '<b>客服</b>：support@example.com',
})

describe('Telegram bot screen', { timeout: 30_000 }, () => {
  it('lists the menu commands with their format; searches', async () => {
    resetTelegramMocks([pricing, support])
    signIn()
    renderApp('/panel/telegram')
    const table = await screen.findByTestId('telegram-menus-table')
    expect(within(table).getAllByTestId('telegram-menu-command').map((c) => c.textContent)).toEqual(['/pricing', '/support'])
    const row = within(table).getByTestId('telegram-menu-row-2')
    expect(within(row).getByTestId('telegram-menu-description')).toHaveTextContent('联系客服')
    expect(within(row).getByTestId('telegram-menu-parse-mode')).toHaveTextContent('HTML')
    expect(within(within(table).getByTestId('telegram-menu-row-1')).getByTestId('telegram-menu-parse-mode')).toHaveTextContent('纯文本')
    expect(screen.getByTestId('pagination-total')).toHaveTextContent('共 2 条')

    const user = userEvent.setup()
    await user.type(screen.getByTestId('telegram-search'), '客服{Enter}')
    await waitFor(() => expect(screen.getByTestId('pagination-total')).toHaveTextContent('共 1 条'))
    expect(within(screen.getByTestId('telegram-menus-table')).getAllByTestId('telegram-menu-command').map((c) => c.textContent)).toEqual([
      '/support',
    ])
    await user.clear(screen.getByTestId('telegram-search'))
    await user.type(screen.getByTestId('telegram-search'), 'nothing{Enter}')
    expect(await screen.findByTestId('telegram-menus-empty')).toHaveTextContent('没有符合条件的命令')
  })

  it('shows the empty state', async () => {
    resetTelegramMocks([])
    signIn()
    renderApp('/panel/telegram')
    expect(await screen.findByTestId('telegram-menus-empty')).toHaveTextContent('还没有自定义命令')
  })

  it('creates a command without its leading /, then asks for a reload', async () => {
    resetTelegramMocks([])
    signIn()
    const writes = recordWrites()
    renderApp('/panel/telegram')
    await screen.findByTestId('telegram-menus-empty')
    expect(screen.queryByTestId('telegram-reload-needed')).not.toBeInTheDocument()

    const user = userEvent.setup()
    await user.click(screen.getByTestId('telegram-create'))
    const dialog = await screen.findByTestId('telegram-form-dialog')
    await user.click(within(dialog).getByTestId('telegram-form-submit'))
    expect(await within(dialog).findByText('请输入命令')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入描述')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入回复内容')).toBeInTheDocument()

    await user.type(within(dialog).getByLabelText('命令'), '/pricing')
    await user.type(within(dialog).getByLabelText('描述'), ' 查看模型价格 ')
    await user.selectOptions(within(dialog).getByLabelText('消息格式'), 'MarkdownV2')
    await user.type(within(dialog).getByLabelText('回复内容'), '*价格*')
    expect(within(dialog).getByTestId('telegram-reply-count')).toHaveTextContent('4 / 4096')
    await user.click(within(dialog).getByTestId('telegram-form-submit'))
    await waitFor(() =>
      expect(writes).toEqual([
        { method: 'POST', body: { command: 'pricing', description: '查看模型价格', parse_mode: 'MarkdownV2', reply_message: '*价格*' } },
      ]),
    )
    expect(await screen.findByText('命令已添加！')).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByTestId('telegram-form-dialog')).not.toBeInTheDocument())
    expect(await screen.findByTestId('telegram-menu-row-1')).toHaveTextContent('/pricing')
    expect(screen.getByTestId('telegram-reload-needed')).toHaveTextContent('菜单已修改')

    // Until a reload registers it with Telegram.
    await user.click(screen.getByTestId('telegram-reload'))
    expect(await screen.findByText('菜单已重新加载：Telegram 现在显示 10 个命令')).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByTestId('telegram-reload-needed')).not.toBeInTheDocument())
  })

  it('refuses a built-in or malformed command before sending anything', async () => {
    resetTelegramMocks([])
    signIn()
    const writes = recordWrites()
    const { user, dialog } = await openDialog('/panel/telegram', 'telegram-create', 'telegram-form-dialog')
    const command = within(dialog).getByLabelText('命令')
    await user.type(within(dialog).getByLabelText('描述'), '帮助')
    await user.type(within(dialog).getByLabelText('回复内容'), 'hi')

    await user.type(command, '/help')
    await user.click(within(dialog).getByTestId('telegram-form-submit'))
    expect(await within(dialog).findByText('/help 是内置命令，请换一个')).toBeInTheDocument()

    await user.clear(command)
    await user.type(command, 'My-Command')
    await user.click(within(dialog).getByTestId('telegram-form-submit'))
    expect(await within(dialog).findByText('命令只能包含小写字母、数字和下划线')).toBeInTheDocument()

    await user.clear(command)
    await user.type(command, 'a'.repeat(33))
    await user.click(within(dialog).getByTestId('telegram-form-submit'))
    expect(await within(dialog).findByText('命令最多 32 个字符')).toBeInTheDocument()
    expect(writes).toEqual([])
  })

  it('a command taken on the server is told in Chinese', async () => {
    resetTelegramMocks([pricing])
    signIn()
    const { user, dialog } = await openDialog('/panel/telegram', 'telegram-create', 'telegram-form-dialog')
    await user.type(within(dialog).getByLabelText('命令'), 'pricing')
    await user.type(within(dialog).getByLabelText('描述'), '重复')
    await user.type(within(dialog).getByLabelText('回复内容'), 'x')
    await user.click(within(dialog).getByTestId('telegram-form-submit'))
    expect(await screen.findByText('错误：这个命令已被其他菜单项或内置命令使用，请换一个。')).toBeInTheDocument()
    expect(screen.getByTestId('telegram-form-dialog')).toBeInTheDocument()
  })

  it('edits every field and deletes after a confirmation', async () => {
    resetTelegramMocks([pricing, support])
    signIn()
    const writes = recordWrites()
    let deleted = ''
    server.use(
      http.delete('*/api/option/telegram/:id', ({ params }) => {
        deleted = String(params.id)
        return HttpResponse.json({ success: true, message: '' })
      }),
    )
    const { user } = openScreen('/panel/telegram')
    await user.click(within(await screen.findByTestId('telegram-menu-row-2')).getByTestId('telegram-menu-edit'))
    const dialog = await screen.findByTestId('telegram-form-dialog')
    expect(within(dialog).getByLabelText('命令')).toHaveValue('support')
    expect(within(dialog).getByLabelText('消息格式')).toHaveValue('HTML')
    await user.selectOptions(within(dialog).getByLabelText('消息格式'), '纯文本')
    await user.clear(within(dialog).getByLabelText('回复内容'))
    await user.type(within(dialog).getByLabelText('回复内容'), '客服：support@example.com')
    await user.click(within(dialog).getByTestId('telegram-form-submit'))
    await waitFor(() =>
      expect(writes).toEqual([
        {
          method: 'PUT',
          body: { id: 2, command: 'support', description: '联系客服', parse_mode: '', reply_message: '客服：support@example.com' },
        },
      ]),
    )
    expect(await screen.findByText('命令已更新！')).toBeInTheDocument()

    await user.click(within(screen.getByTestId('telegram-menu-row-1')).getByTestId('telegram-menu-delete'))
    const confirm = await screen.findByTestId('telegram-delete-dialog')
    expect(confirm).toHaveTextContent('确定删除命令 /pricing 吗？')
    expect(deleted).toBe('')
    await user.click(within(confirm).getByTestId('telegram-delete-dialog-confirm'))
    await waitFor(() => expect(deleted).toBe('1'))
    expect(await screen.findByText('命令已删除！')).toBeInTheDocument()
    expect(screen.getByTestId('telegram-reload-needed')).toBeInTheDocument()
  })
})

describe('Telegram bot status', { timeout: 30_000 }, () => {
  it('shows an online (webhook) bot with its username', async () => {
    resetTelegramMocks([], { mode: 'webhook', online: true, running: true, username: 'switchboard_bot' })
    signIn()
    renderApp('/panel/telegram')
    const card = await screen.findByTestId('telegram-status')
    expect(await within(card).findByTestId('telegram-mode')).toHaveTextContent('在线（Webhook）')
    expect(within(card).getByTestId('telegram-configured')).toHaveTextContent('已配置')
    expect(within(card).getByTestId('telegram-username')).toHaveTextContent('@switchboard_bot')
    expect(within(card).getByTestId('telegram-username')).toHaveAttribute('href', 'https://t.me/switchboard_bot')
    expect(within(card).getByTestId('telegram-running')).toHaveTextContent('本服务器正在接收')
    expect(within(card).queryByTestId('telegram-last-error')).not.toBeInTheDocument()
    expect(within(card).queryByTestId('telegram-not-configured')).not.toBeInTheDocument()
  })

  it('shows an offline (polling) bot and its last error', async () => {
    resetTelegramMocks([], { mode: 'polling', online: false, running: false, last_error: 'Conflict: terminated by other getUpdates request' })
    signIn()
    renderApp('/panel/telegram')
    const card = await screen.findByTestId('telegram-status')
    expect(await within(card).findByTestId('telegram-mode')).toHaveTextContent('离线（轮询）')
    expect(within(card).getByTestId('telegram-running')).toHaveTextContent('本服务器未在接收')
    expect(within(card).getByTestId('telegram-last-error')).toHaveTextContent('Conflict: terminated by other getUpdates request')
  })

  it('reloads the menu: shows how many commands Telegram has and clears the hint', async () => {
    resetTelegramMocks([pricing, support], { reload_needed: true })
    signIn()
    let reloads = 0
    server.use(
      http.put('*/api/option/telegram/reload', () => {
        reloads++
        return ok({ commands: 11 })
      }),
      http.get('*/api/option/telegram/status', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: { configured: true, mode: 'webhook', online: true, username: 'switchboard_bot', running: true, reload_needed: reloads === 0, last_error: '' } satisfies TelegramStatus,
        }),
      ),
    )
    renderApp('/panel/telegram')
    expect(await screen.findByTestId('telegram-reload-needed')).toHaveTextContent('重新加载菜单后')
    const user = userEvent.setup()
    await user.click(screen.getByTestId('telegram-reload'))
    expect(await screen.findByText('菜单已重新加载：Telegram 现在显示 11 个命令')).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByTestId('telegram-reload-needed')).not.toBeInTheDocument())
    expect(reloads).toBe(1)
  })

  it('a bot without a token links to the settings; a reload is refused in Chinese', async () => {
    resetTelegramMocks([pricing], { configured: false, mode: 'off', online: false, running: false, username: '' })
    signIn()
    renderApp('/panel/telegram')
    const card = await screen.findByTestId('telegram-status')
    expect(await within(card).findByTestId('telegram-configured')).toHaveTextContent('未配置')
    expect(within(card).getByTestId('telegram-mode')).toHaveTextContent('未运行')
    expect(within(card).getByTestId('telegram-not-configured')).toHaveTextContent('系统设置 → Telegram 机器人')
    expect(within(card).getByTestId('telegram-settings-link')).toHaveAttribute('href', '/panel/setting?tab=system')

    const user = userEvent.setup()
    await user.click(within(card).getByTestId('telegram-reload'))
    expect(await screen.findByText('错误：Telegram 机器人尚未配置：请先在系统设置中填写机器人 Token。')).toBeInTheDocument()
    expect(screen.queryByText(/not set/)).not.toBeInTheDocument()

    // The link opens the settings on the tab that holds the bot's token.
    await user.click(within(card).getByTestId('telegram-settings-link'))
    expect(await screen.findByTestId('settings-form-system')).toBeVisible()
  })

  it('is for root only', async () => {
    resetTelegramMocks([pricing])
    signIn(10)
    renderApp('/panel/telegram')
    expect(await screen.findByTestId('no-permission')).toBeInTheDocument()
  })
})
