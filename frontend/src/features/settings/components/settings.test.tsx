import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { ok, openScreen } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockOptions, resetSettingsMocks } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

function signIn(role = mockRoot.role) {
  resetAuthMocks({ ...mockRoot, role })
  setUser({ ...mockRoot, role })
}

/** Records every batch the console sends (and answers it as the server would). */
function recordBatches() {
  const batches: unknown[] = []
  server.use(
    http.put('*/api/option/batch', async ({ request }) => {
      const body = (await request.json()) as { options: { key: string; value: unknown }[] }
      batches.push(body.options)
      return ok(body.options)
    }),
  )
  return batches
}

beforeEach(() => resetSettingsMocks())

describe('settings screen', () => {
  it('one Save per tab sends every changed key of the tab together, checked by kind, quotas as money', async () => {
    const batches = recordBatches()
    signIn()
    renderApp('/panel/setting')
    const general = await screen.findByTestId('settings-section-general')
    const quota = screen.getByTestId('settings-section-quota')
    expect(within(general).getByLabelText('每美元额度')).toHaveValue(500000)
    expect(within(general).getByRole('switch', { name: '以货币形式显示额度' })).toBeChecked()
    // 250000 quota units are typed as $0.5, with the units beside them.
    const newUser = within(quota).getByLabelText('新用户初始额度')
    expect(newUser).toHaveValue('0.5')
    expect(within(quota).getByTestId('quota-hint')).toHaveTextContent('= 250,000 额度')
    expect(screen.getByTestId('settings-pending-operation')).toHaveTextContent('没有未保存的修改')

    const user = userEvent.setup()
    await user.click(within(general).getByRole('switch', { name: '以货币形式显示额度' }))
    await user.clear(newUser)
    await user.type(newUser, '2.x')
    const perUnit = within(general).getByLabelText('每美元额度')
    await user.clear(perUnit)
    await user.type(perUnit, '0')
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await within(quota).findByText('请输入金额（最多 6 位小数）')).toBeInTheDocument()
    expect(within(general).getByText('取值范围为 1 到 1000000000')).toBeInTheDocument()
    expect(batches).toEqual([])

    await user.clear(newUser)
    await user.type(newUser, '2')
    expect(within(quota).getByTestId('quota-hint')).toHaveTextContent('= 1,000,000 额度')
    await user.clear(perUnit)
    await user.type(perUnit, '1000000')
    expect(screen.getByTestId('settings-pending-operation')).toHaveTextContent('3 项修改尚未保存')
    // One save for both sections of the tab; the dollars go back as quota units.
    expect(screen.getAllByRole('button', { name: '保存' })).toHaveLength(3)
    await user.click(screen.getByTestId('settings-save-operation'))
    await waitFor(() =>
      expect(batches).toEqual([
        [
          { key: 'DisplayInCurrencyEnabled', value: false },
          { key: 'QuotaPerUnit', value: '1000000' },
          { key: 'QuotaForNewUser', value: '1000000' },
        ],
      ]),
    )
    expect(await screen.findByText('已保存 3 项设置')).toBeInTheDocument()
  })

  it('discard puts back what is stored; what was typed survives switching tabs', async () => {
    const batches = recordBatches()
    signIn()
    const { user } = openScreen('/panel/setting')
    const retry = within(await screen.findByTestId('settings-section-channels')).getByLabelText('重试次数')
    await user.clear(retry)
    await user.type(retry, '3')
    await user.click(screen.getByTestId('settings-tab-other'))
    await user.click(screen.getByTestId('settings-tab-operation'))
    expect(retry).toHaveValue(3)
    expect(screen.getByTestId('settings-pending-operation')).toHaveTextContent('1 项修改尚未保存')
    await user.click(screen.getByTestId('settings-discard-operation'))
    expect(retry).toHaveValue(0)
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await screen.findByText('没有需要保存的修改')).toBeInTheDocument()
    expect(batches).toEqual([])
  })

  it('chat clients are edited as rows, and each needs a name and a web or app address', async () => {
    const batches = recordBatches()
    signIn()
    renderApp('/panel/setting')
    const editor = await screen.findByTestId('chat-links-editor')
    const rows = () => within(editor).getAllByTestId('chat-link-row') as [HTMLElement, ...HTMLElement[]]
    expect(rows()).toHaveLength(1)
    expect(within(rows()[0]).getByLabelText('名称')).toHaveValue('NextChat')

    const user = userEvent.setup()
    await user.click(within(editor).getByTestId('chat-link-add'))
    expect(rows()).toHaveLength(2)
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await screen.findByText('每个客户端都需要名称和地址')).toBeInTheDocument()
    expect(batches).toEqual([])

    await user.type(within(rows()[1] as HTMLElement).getByLabelText('名称'), 'Lobe')
    // Script addresses are refused before anything is sent (the server refuses them too).
    await user.click(within(rows()[1] as HTMLElement).getByLabelText('地址模板'))
    await user.paste('javascript:alert(document.cookie)//{key}')
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await screen.findByText('聊天链接必须以 http://、https://、ama:// 或 opencat:// 开头')).toBeInTheDocument()
    expect(batches).toEqual([])
    await user.clear(within(rows()[1] as HTMLElement).getByLabelText('地址模板'))
    await user.click(within(rows()[1] as HTMLElement).getByLabelText('地址模板'))
    await user.paste('https://lobe.example/?key={key}')
    // The new client goes first; the first one is hidden.
    await user.click(within(rows()[1] as HTMLElement).getByTestId('chat-link-up'))
    await user.click(within(rows()[1] as HTMLElement).getByRole('switch', { name: '显示' }))
    await user.click(screen.getByTestId('settings-save-operation'))
    await waitFor(() => expect(batches).toHaveLength(1))
    const [change] = batches[0] as [{ key: string; value: string }]
    expect(change.key).toBe('ChatLinks')
    expect(JSON.parse(change.value)).toEqual([
      { name: 'Lobe', url: 'https://lobe.example/?key={key}', show: true, sort: 1 },
      { name: 'NextChat', url: 'https://app.nextchat.dev/#/?settings={"key":"{key}"}', show: false, sort: 2 },
    ])
  })

  it('the default language is chosen from the four', async () => {
    const batches = recordBatches()
    signIn()
    const { user } = openScreen('/panel/setting')
    await user.click(await screen.findByTestId('settings-tab-other'))
    const language = within(screen.getByTestId('settings-section-site')).getByLabelText('默认语言')
    expect(language).toHaveValue('zh_CN')
    await user.selectOptions(language, 'English')
    await user.click(screen.getByTestId('settings-save-other'))
    await waitFor(() => expect(batches).toEqual([[{ key: 'Language', value: 'en' }]]))
  })

  it('secrets are write-only: blank, marked as set, sent only when typed; unknown keys show under other', async () => {
    const batches = recordBatches()
    signIn()
    const { user } = openScreen('/panel/setting')
    await user.click(await screen.findByTestId('settings-tab-system'))
    const smtp = await screen.findByTestId('settings-section-smtp')
    const secret = within(smtp).getByLabelText('SMTP 密码')
    expect(secret).toHaveValue('')
    expect(secret).toHaveAttribute('placeholder', '已设置；留空则保持不变')
    await user.click(screen.getByTestId('settings-save-system'))
    expect(await screen.findByText('没有需要保存的修改')).toBeInTheDocument()
    await user.type(secret, 'p4ss')
    await user.click(screen.getByTestId('settings-save-system'))
    await waitFor(() => expect(batches).toEqual([[{ key: 'SMTPToken', value: 'p4ss' }]]))

    await user.click(screen.getByTestId('settings-tab-other'))
    const unknown = await screen.findByTestId('settings-section-unknown')
    expect(within(unknown).getByLabelText('FutureOption')).toHaveValue('x')
    // A setting whose feature is not built yet is not offered at all (a dead switch misleads).
    expect(screen.queryByText('MjNotifyEnabled')).not.toBeInTheDocument()
  })

  it('the Telegram webhook secret is write-only and says when the bot runs as a webhook; ?tab= opens a tab', async () => {
    const batches = recordBatches()
    signIn()
    renderApp('/panel/setting?tab=system')
    const telegram = await screen.findByTestId('settings-section-telegram')
    expect(telegram).toBeVisible()
    const secret = within(telegram).getByLabelText('Webhook 密钥')
    expect(secret).toHaveAttribute('type', 'password')
    expect(secret).toHaveValue('')
    expect(secret).toHaveAttribute('placeholder', '未设置')
    expect(within(telegram).getByLabelText('机器人 Token')).toHaveAttribute('placeholder', '已设置；留空则保持不变')
    expect(within(telegram).getByTestId('option-hint-TelegramWebhookSecret')).toHaveTextContent(
      '{ServerAddress}/api/telegram/{机器人 Token}',
    )
    // The server address should be set: reset links in e-mails and sign-in callbacks use it.
    expect(await screen.findByTestId('option-hint-ServerAddress')).toHaveTextContent('密码重置邮件')
    const user = userEvent.setup()
    await user.type(secret, 'hook-secret')
    await user.click(screen.getByTestId('settings-save-system'))
    await waitFor(() => expect(batches).toEqual([[{ key: 'TelegramWebhookSecret', value: 'hook-secret' }]]))
  })

  it('the response cache settings sit together with help texts and the server\'s ranges', async () => {
    const batches = recordBatches()
    signIn()
    renderApp('/panel/setting')
    const cache = await screen.findByTestId('settings-section-cache')
    expect(within(cache).getByRole('heading', { name: '响应缓存' })).toBeInTheDocument()
    const enabled = within(cache).getByRole('switch', { name: '启用响应缓存' })
    expect(enabled).not.toBeChecked()
    expect(within(cache).getByLabelText('缓存有效期（分钟）')).toHaveValue(5)
    const ratio = within(cache).getByLabelText('缓存命中计费比例')
    const entries = within(cache).getByLabelText('最多缓存条数')
    const size = within(cache).getByLabelText('单条回答上限（KiB）')
    expect(ratio).toHaveValue(0)
    expect(entries).toHaveValue(10000)
    expect(size).toHaveValue(512)
    expect(within(cache).getByTestId('option-hint-ChatCacheEnabled')).toHaveTextContent('X-Switchboard-Cache: hit')
    expect(within(cache).getByTestId('option-hint-ChatCacheRatio')).toHaveTextContent('0 为免费')
    expect(within(cache).getByTestId('option-hint-ChatCacheMaxEntries')).toHaveTextContent('Redis 会自行过期')
    expect(within(cache).getByTestId('option-hint-ChatCacheMaxEntryKB')).toHaveTextContent('KiB')
    expect(within(cache).getByTestId('option-hint-ChatCacheExpireMinute')).toBeInTheDocument()

    const user = userEvent.setup()
    await user.click(enabled)
    await user.clear(ratio)
    await user.type(ratio, '1.5')
    await user.clear(entries)
    await user.type(entries, '50')
    await user.clear(size)
    await user.type(size, '16385')
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await within(cache).findByText('取值范围为 0 到 1')).toBeInTheDocument()
    expect(within(cache).getByText('取值范围为 100 到 10000000')).toBeInTheDocument()
    expect(within(cache).getByText('取值范围为 1 到 16384')).toBeInTheDocument()
    expect(batches).toEqual([])

    await user.clear(ratio)
    await user.type(ratio, '0.25')
    await user.clear(entries)
    await user.type(entries, '50000')
    await user.clear(size)
    await user.type(size, '1024')
    await user.click(screen.getByTestId('settings-save-operation'))
    await waitFor(() =>
      expect(batches).toEqual([
        [
          { key: 'ChatCacheEnabled', value: true },
          { key: 'ChatCacheRatio', value: '0.25' },
          { key: 'ChatCacheMaxEntries', value: '50000' },
          { key: 'ChatCacheMaxEntryKB', value: '1024' },
        ],
      ]),
    )
  })

  it('smarter routing: the breaker and latency-aware choice, with the ratio checked as the server does', async () => {
    const batches = recordBatches()
    signIn()
    renderApp('/panel/setting')
    const routing = await screen.findByTestId('settings-section-routing')
    expect(within(routing).getByRole('heading', { name: '智能路由' })).toBeInTheDocument()
    const breaker = within(routing).getByRole('switch', { name: '按渠道和模型熔断' })
    const latency = within(routing).getByRole('switch', { name: '同优先级内按延迟选择渠道' })
    expect(breaker).not.toBeChecked()
    expect(latency).not.toBeChecked()
    const ratio = within(routing).getByLabelText('触发熔断的错误率（0–1）')
    const minRequests = within(routing).getByLabelText('窗口内最少请求数')
    const open = within(routing).getByLabelText('熔断后探测前的等待时间（秒）')
    expect(ratio).toHaveValue(0.5)
    expect(minRequests).toHaveValue(10)
    expect(within(routing).getByLabelText('错误统计窗口（秒）')).toHaveValue(60)
    expect(open).toHaveValue(30)
    expect(within(routing).getByTestId('option-hint-CircuitBreakerEnabled')).toHaveTextContent('每个节点')
    expect(within(routing).getByTestId('option-hint-LatencyAwareRouting')).toHaveTextContent('EWMA')

    const user = userEvent.setup()
    await user.click(breaker)
    await user.clear(ratio)
    await user.type(ratio, '0')
    await user.clear(minRequests)
    await user.type(minRequests, '0')
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await within(routing).findByText('必须大于 0 且不超过 1')).toBeInTheDocument()
    expect(within(routing).getByText('取值范围为 1 到 1000000')).toBeInTheDocument()
    expect(batches).toEqual([])

    await user.clear(ratio)
    await user.type(ratio, '1.5')
    await user.clear(minRequests)
    await user.type(minRequests, '20')
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await within(routing).findByText('必须大于 0 且不超过 1')).toBeInTheDocument()
    expect(batches).toEqual([])

    await user.clear(ratio)
    await user.type(ratio, '0.3')
    await user.click(latency)
    await user.click(screen.getByTestId('settings-save-operation'))
    await waitFor(() =>
      expect(batches).toEqual([
        [
          { key: 'CircuitBreakerEnabled', value: true },
          { key: 'CircuitBreakerErrorRatio', value: '0.3' },
          { key: 'CircuitBreakerMinRequests', value: '20' },
          { key: 'LatencyAwareRouting', value: true },
        ],
      ]),
    )
  })

  it('a ratio the server refuses is explained in the reader’s language', async () => {
    server.use(
      http.put('*/api/option/batch', () =>
        HttpResponse.json(
          { success: false, message: 'CircuitBreakerErrorRatio is not valid', code: 'invalid_ratio' },
          { status: 400 },
        ),
      ),
    )
    signIn()
    renderApp('/panel/setting')
    const routing = await screen.findByTestId('settings-section-routing')
    const user = userEvent.setup()
    await user.click(within(routing).getByRole('switch', { name: '按渠道和模型熔断' }))
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await screen.findByText('错误：比例必须是大于 0 且不超过 1 的数字。')).toBeInTheDocument()
  })

  it('a refused save is explained in the reader’s language', async () => {
    server.use(
      http.put('*/api/option/batch', () =>
        HttpResponse.json({ success: false, message: 'RetryTimes must be between 0 and 10', code: 'out_of_range' }, { status: 400 }),
      ),
    )
    signIn()
    renderApp('/panel/setting')
    const section = await screen.findByTestId('settings-section-channels')
    const user = userEvent.setup()
    await user.clear(within(section).getByLabelText('重试次数'))
    await user.type(within(section).getByLabelText('重试次数'), '3')
    await user.click(screen.getByTestId('settings-save-operation'))
    expect(await screen.findByText('错误：有数值超出了允许的范围。')).toBeInTheDocument()
    // Still unsaved: nothing of it was written.
    expect(screen.getByTestId('settings-pending-operation')).toHaveTextContent('1 项修改尚未保存')
  })

  it('administrators manage what the server lists to them, and are told what root keeps', async () => {
    // The server leaves the root-only settings out for an administrator.
    resetSettingsMocks(mockOptions().filter((o) => !o.root_only))
    signIn(10)
    renderApp('/panel/setting')
    expect(await screen.findByTestId('settings-admin-note')).toHaveTextContent('仅超级管理员可见')
    const general = screen.getByTestId('settings-section-general')
    expect(within(general).queryByLabelText('每美元额度')).not.toBeInTheDocument()
    expect(within(general).getByRole('switch', { name: '以货币形式显示额度' })).toBeInTheDocument()
    // Every system setting is root's: no such tab.
    expect(screen.queryByTestId('settings-tab-system')).not.toBeInTheDocument()
    expect(screen.getByTestId('settings-tab-other')).toBeInTheDocument()
  })

  it('ordinary users are told they lack the permission', async () => {
    signIn(1)
    renderApp('/panel/setting')
    expect(await screen.findByTestId('no-permission')).toBeInTheDocument()
  })

  it('a settings list that cannot be read says why and offers a retry', async () => {
    server.use(
      http.get('*/api/option', () => HttpResponse.json({ success: false, message: 'database is down', code: 'internal' }, { status: 500 })),
    )
    signIn()
    renderApp('/panel/setting')
    expect(await screen.findByTestId('settings-empty-error')).toBeInTheDocument()
    expect(screen.getByTestId('settings-empty-retry')).toBeInTheDocument()
  })
})
