import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { formatTimestamp } from '@/lib/format'
import { mockGroupMap } from '@/features/users/mocks/handlers'
import { setUser, setUserGroups } from '@/stores/session'
import { ok, openDialog, openScreen } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { fullKeyOf, mockToken, resetTokenMocks } from '../mocks/handlers'

const NOW_S = Math.floor(Date.now() / 1000)

function signIn() {
  resetAuthMocks(mockRoot)
  setUser(mockRoot)
  setUserGroups(mockGroupMap)
}

describe('tokens screen', { timeout: 20_000 }, () => {
  it('lists tokens with status, quota, times; searches and pages', async () => {
    const tokens = Array.from({ length: 12 }, (_, i) =>
      mockToken({ id: i + 1, name: `key-${i + 1}`, used_quota: 250_000 }),
    )
    tokens[11] = mockToken({ id: 12, name: 'special', status: 2, unlimited_quota: true, expired_at: NOW_S + 86_400 })
    tokens[10] = mockToken({ id: 11, name: 'old', status: 3, expired_at: NOW_S - 10 })
    tokens[9] = mockToken({ id: 10, name: 'empty', status: 4, remain_quota: 0 })
    resetTokenMocks(tokens)
    signIn()
    renderApp('/panel/token')

    const table = await screen.findByTestId('tokens-table')
    const special = within(table).getByTestId('token-row-12')
    expect(within(special).getByTestId('token-name')).toHaveTextContent('special')
    expect(within(special).getByTestId('token-status')).toHaveTextContent('已禁用')
    expect(within(special).getByTestId('token-remain')).toHaveTextContent('无限额度')
    expect(within(special).getByTestId('token-expiry')).toHaveTextContent(formatTimestamp(NOW_S + 86_400))
    expect(within(special).getByText(formatTimestamp(tokens[0]!.created_at))).toBeInTheDocument()
    expect(within(table).getByTestId('token-row-11')).toHaveTextContent('已过期')
    expect(within(table).getByTestId('token-row-10')).toHaveTextContent('已耗尽')
    const first = within(table).getByTestId('token-row-9')
    expect(first).toHaveTextContent('已启用')
    expect(within(first).getByTestId('token-expiry')).toHaveTextContent('永不过期')
    // Site status: display in currency, 500000 per unit.
    await waitFor(() => expect(within(first).getByTestId('token-remain')).toHaveTextContent('$1.00'))
    expect(within(first).getByTestId('token-used')).toHaveTextContent('$0.50')

    expect(within(table).getAllByRole('row')).toHaveLength(11) // header + 10
    expect(screen.getByTestId('pagination-total')).toHaveTextContent('共 12 条')
    const user = userEvent.setup()
    await user.click(screen.getByRole('button', { name: '下一页' }))
    await waitFor(() => expect(screen.getByTestId('pagination-page')).toHaveTextContent('第 2 / 2 页'))
    await waitFor(() => expect(within(screen.getByTestId('tokens-table')).getAllByRole('row')).toHaveLength(3))

    await user.type(screen.getByTestId('token-search'), 'special{Enter}')
    await waitFor(() => expect(within(screen.getByTestId('tokens-table')).getAllByRole('row')).toHaveLength(2))
    expect(screen.getByTestId('token-row-12')).toBeInTheDocument()

    await user.clear(screen.getByTestId('token-search'))
    await user.type(screen.getByTestId('token-search'), 'nothing-like-this{Enter}')
    expect(await screen.findByTestId('tokens-empty')).toHaveTextContent('没有符合条件的令牌')
  })

  it('shows the empty state without tokens', async () => {
    signIn()
    renderApp('/panel/token')
    expect(await screen.findByTestId('tokens-empty')).toHaveTextContent('还没有令牌')
    expect(screen.queryByTestId('pagination')).not.toBeInTheDocument()
  })

  it('create validates, posts the payload and shows the full key once', async () => {
    let body: unknown
    server.use(
      http.post('*/api/token', async ({ request }) => {
        body = await request.json()
        return HttpResponse.json(
          { success: true, message: '', data: mockToken({ id: 7, name: 'my app', key: fullKeyOf(7) }) },
          { status: 201 },
        )
      }),
    )
    signIn()
    const { user, dialog } = await openDialog('/panel/token', 'token-create', 'token-form-dialog')

    // A new key starts unlimited (usable at once); a limit is typed in dollars.
    expect(within(dialog).getByRole('switch', { name: '无限额度' })).toBeChecked()
    expect(within(dialog).getByLabelText('额度')).toBeDisabled()
    await user.click(within(dialog).getByRole('switch', { name: '无限额度' }))
    await user.clear(within(dialog).getByLabelText('额度'))
    await user.type(within(dialog).getByLabelText('额度'), '1.1234567')
    await user.click(within(dialog).getByRole('switch', { name: '永不过期' }))
    await user.click(within(dialog).getByTestId('token-form-submit'))
    expect(await within(dialog).findByText('名称不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText('额度须为不小于 0 的金额（最多 6 位小数）')).toBeInTheDocument()
    expect(within(dialog).getByText('请选择过期时间')).toBeInTheDocument()
    expect(body).toBeUndefined()

    await user.type(within(dialog).getByLabelText('名称'), 'x'.repeat(65))
    await user.click(within(dialog).getByTestId('token-form-submit'))
    expect(await within(dialog).findByText('名称不能超过 64 个字符')).toBeInTheDocument()

    await user.clear(within(dialog).getByLabelText('名称'))
    await user.type(within(dialog).getByLabelText('名称'), '  my app ')
    await user.clear(within(dialog).getByLabelText('额度'))
    await user.type(within(dialog).getByLabelText('额度'), '0.002')
    expect(within(dialog).getByText('= 1,000 额度单位')).toBeInTheDocument()
    await user.click(within(dialog).getByRole('switch', { name: '永不过期' })) // back to never
    await user.type(within(dialog).getByLabelText('允许的模型'), 'gpt-4o-mini,claude-*')
    // Billed to another group the owner may use, with a rate of its own.
    const group = within(dialog).getByLabelText('分组')
    expect(group).toHaveValue('')
    expect(within(group).getByRole('option', { name: '账户分组（Default）' })).toBeInTheDocument()
    await user.selectOptions(group, 'VIP（倍率 0.8）')
    await user.clear(within(dialog).getByLabelText('每分钟请求数上限'))
    await user.type(within(dialog).getByLabelText('每分钟请求数上限'), '2000000')
    await user.click(within(dialog).getByRole('switch', { name: '心跳' }))
    await user.clear(within(dialog).getByLabelText('心跳起始时间（秒）'))
    await user.type(within(dialog).getByLabelText('心跳起始时间（秒）'), '120')
    await user.click(within(dialog).getByTestId('token-form-submit'))
    expect(await within(dialog).findByText('心跳时间须在 30 到 90 秒之间')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入 0 到 1000000 之间的整数')).toBeInTheDocument()
    await user.clear(within(dialog).getByLabelText('每分钟请求数上限'))
    await user.type(within(dialog).getByLabelText('每分钟请求数上限'), '30')
    await user.clear(within(dialog).getByLabelText('心跳起始时间（秒）'))
    await user.type(within(dialog).getByLabelText('心跳起始时间（秒）'), '60')
    // The response cache toggle: off by default, explained by its help text.
    const cache = within(dialog).getByRole('switch', { name: '响应缓存' })
    expect(cache).not.toBeChecked()
    expect(within(dialog).getByText(/相同非流式聊天请求直接由缓存应答（响应头 X-Switchboard-Cache: hit）/)).toBeInTheDocument()
    await user.click(cache)
    await user.click(within(dialog).getByTestId('token-form-submit'))

    const keyDialog = await screen.findByTestId('token-key-dialog')
    expect(body).toEqual({
      name: 'my app',
      remain_quota: 1000,
      unlimited_quota: false,
      expired_at: -1,
      models: 'gpt-4o-mini,claude-*',
      subnet: '',
      group: 'vip',
      api_rate: 30,
      heartbeat_enabled: true,
      heartbeat_timeout: 60,
      cache_enabled: true,
    })
    expect(within(keyDialog).getByTestId('token-full-key')).toHaveValue(fullKeyOf(7))
    expect(screen.queryByTestId('token-form-dialog')).not.toBeInTheDocument()
    await user.click(within(keyDialog).getByTestId('token-key-copy'))
    expect(await navigator.clipboard.readText()).toBe(fullKeyOf(7))
    expect(await screen.findByText('复制成功！')).toBeInTheDocument()
  })

  it('sends a future expiry as unix seconds', async () => {
    let body: { expired_at?: number } | undefined
    server.use(
      http.post('*/api/token', async ({ request }) => {
        body = (await request.json()) as typeof body
        return ok(mockToken({ key: fullKeyOf(1) }), 201)
      }),
    )
    signIn()
    const { user, dialog } = await openDialog('/panel/token', 'token-create', 'token-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'expiring')
    await user.click(within(dialog).getByRole('switch', { name: '永不过期' }))
    const expiry = within(dialog).getByLabelText('过期时间')
    await user.type(expiry, '2000-01-01T10:00')
    await user.click(within(dialog).getByTestId('token-form-submit'))
    expect(await within(dialog).findByText('过期时间必须晚于现在')).toBeInTheDocument()

    await user.clear(expiry)
    await user.type(expiry, '2099-06-30T12:30')
    await user.click(within(dialog).getByTestId('token-form-submit'))
    await screen.findByTestId('token-key-dialog')
    expect(body?.expired_at).toBe(Math.floor(new Date('2099-06-30T12:30').getTime() / 1000))
  })

  it('shows a server validation error once through the central handler and keeps the form', async () => {
    server.use(
      http.post('*/api/token', () =>
        HttpResponse.json(
          { success: false, message: 'model name "*" is not valid', code: 'invalid_model' },
          { status: 400 },
        ),
      ),
    )
    signIn()
    const { user, dialog } = await openDialog('/panel/token', 'token-create', 'token-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'bad')
    await user.click(within(dialog).getByTestId('token-form-submit'))
    expect(await screen.findByText('错误：model name "*" is not valid')).toBeInTheDocument()
    expect(screen.getAllByText(/is not valid/)).toHaveLength(1)
    expect(screen.getByTestId('token-form-dialog')).toBeInTheDocument()
  })

  it('copies a key fetched from /api/token/{id}/key', async () => {
    resetTokenMocks([mockToken({ id: 3, name: 'copy me' })])
    signIn()
    const { user } = openScreen('/panel/token')
    const row = await screen.findByTestId('token-row-3')
    await user.click(within(row).getByTestId('token-copy'))
    expect(await screen.findByText('复制成功！')).toBeInTheDocument()
    expect(await navigator.clipboard.readText()).toBe(fullKeyOf(3))
  })

  it('disables, edits and deletes (after confirmation) a token', async () => {
    const puts: unknown[] = []
    server.use(
      http.put('*/api/token', async ({ request }) => {
        puts.push(await request.json())
        return ok(mockToken())
      }),
    )
    let deleted = ''
    server.use(
      http.delete('*/api/token/:id', ({ params }) => {
        deleted = String(params.id)
        return ok(null)
      }),
    )
    resetTokenMocks([mockToken({ id: 5, name: 'five', remain_quota: 42, cache_enabled: true })])
    signIn()
    const { user } = openScreen('/panel/token')
    const row = await screen.findByTestId('token-row-5')

    await user.click(within(row).getByTestId('token-toggle'))
    await waitFor(() => expect(puts).toEqual([{ id: 5, status: 2 }]))
    expect(await screen.findByText('令牌已禁用！')).toBeInTheDocument()

    await user.click(within(row).getByTestId('token-edit'))
    const dialog = await screen.findByTestId('token-form-dialog')
    expect(within(dialog).getByLabelText('名称')).toHaveValue('five')
    // 42 units are $0.000084 (500000 units per dollar) and stay 42 units on save.
    expect(within(dialog).getByLabelText('额度')).toHaveValue(0.000084)
    await user.clear(within(dialog).getByLabelText('名称'))
    await user.type(within(dialog).getByLabelText('名称'), 'renamed')
    // The key's cache toggle is edited too: it was on, switched off here.
    const cache = within(dialog).getByRole('switch', { name: '响应缓存' })
    expect(cache).toBeChecked()
    await user.click(cache)
    await user.click(within(dialog).getByTestId('token-form-submit'))
    await waitFor(() =>
      expect(puts[1]).toMatchObject({ id: 5, name: 'renamed', remain_quota: 42, expired_at: -1, cache_enabled: false }),
    )

    await user.click(within(await screen.findByTestId('token-row-5')).getByTestId('token-delete'))
    const confirm = await screen.findByTestId('token-delete-dialog')
    expect(confirm).toHaveTextContent('确定删除令牌“five”吗')
    expect(deleted).toBe('')
    await user.click(within(confirm).getByTestId('token-delete-confirm'))
    await waitFor(() => expect(deleted).toBe('5'))
    expect(await screen.findByText('令牌已删除！')).toBeInTheDocument()
  })
})
