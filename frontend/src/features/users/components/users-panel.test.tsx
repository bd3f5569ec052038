import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { ok, openDialog, openScreen, recordBodies, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import type { User } from '@/types/api'
import { mockManagedUser, resetUserMocks, userHandlers } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const signIn = (me: User = mockRoot) => signInAs(me, userHandlers)

const alice = mockManagedUser()
const bob = mockManagedUser({ id: 3, username: 'bob', display_name: 'Bob', email: '', role: 10, status: 2, quota: 0, group: 'vip', aff_count: 2, aff_quota: 100 })
const rootRow = mockManagedUser({ id: 1, username: 'root', role: 100, email: '' })

describe('users screen', { timeout: 20_000 }, () => {
  it('lists users with quota, role and status; filters and orders through the query', async () => {
    resetUserMocks([rootRow, alice, bob])
    signIn()
    const queries: URLSearchParams[] = []
    server.events.on('request:start', ({ request }) => {
      const url = new URL(request.url)
      if (url.pathname === '/api/user') queries.push(url.searchParams)
    })
    renderApp('/panel/user')
    const table = await screen.findByTestId('users-table')
    const a = within(table).getByTestId('user-row-2')
    await waitFor(() => expect(within(a).getByTestId('user-quota')).toHaveTextContent('$10.00'))
    expect(within(a).getByTestId('user-used')).toHaveTextContent('已用 $1.00')
    expect(within(a).getByTestId('user-role')).toHaveTextContent('普通用户')
    // Invitations show where there are some (bob invited two people, earning 100 units).
    expect(within(a).queryByTestId('user-aff')).not.toBeInTheDocument()
    expect(within(within(table).getByTestId('user-row-3')).getByTestId('user-aff')).toHaveTextContent('邀请 2 人，奖励 $0.0002')
    expect(within(a).getByTestId('user-status')).toHaveTextContent('已启用')
    const b = within(table).getByTestId('user-row-3')
    expect(within(b).getByTestId('user-role')).toHaveTextContent('管理员')
    expect(within(b).getByTestId('user-status')).toHaveTextContent('已禁用')
    // Nobody manages root.
    expect(within(table).getByTestId('user-row-1')).toHaveTextContent('无权操作')
    expect(within(table).getAllByTestId('user-username').map((n) => n.textContent)).toEqual(['bob', 'alice', 'root'])

    const user = userEvent.setup()
    await user.selectOptions(screen.getByTestId('user-filter-role'), '10')
    await user.selectOptions(screen.getByTestId('user-filter-order'), 'username')
    await user.type(screen.getByTestId('user-filter-group'), 'vip')
    await user.click(screen.getByTestId('user-search'))
    await waitFor(() =>
      expect(within(screen.getByTestId('users-table')).getAllByTestId('user-username').map((n) => n.textContent)).toEqual([
        'bob',
      ]),
    )
    const last = queries.at(-1)!
    expect(Object.fromEntries(last)).toEqual({ page: '1', size: '10', role: '10', group: 'vip', order: 'username' })
    server.events.removeAllListeners()
  })

  it('shows the empty state', async () => {
    resetUserMocks([])
    signIn()
    renderApp('/panel/user')
    expect(await screen.findByTestId('users-empty')).toHaveTextContent('暂无用户')
  })

  it('validates the create form and posts the right body', async () => {
    resetUserMocks([])
    signIn()
    const posted = recordBodies('post', '*/api/user', mockManagedUser({ id: 9 }), 201)
    const { user, dialog } = await openDialog('/panel/user', 'user-create', 'user-form-dialog')
    await user.type(within(dialog).getByLabelText('用户名'), 'ab')
    await user.type(within(dialog).getByLabelText('密码'), 'short')
    await user.type(within(dialog).getByLabelText('邮箱'), 'not-an-email')
    await user.clear(within(dialog).getByLabelText('分组'))
    await user.click(within(dialog).getByTestId('user-form-submit'))
    expect(await within(dialog).findByText('用户名至少 3 个字符')).toBeInTheDocument()
    expect(within(dialog).getByText('密码至少 8 个字符')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入有效的邮箱地址')).toBeInTheDocument()
    expect(within(dialog).getByText('分组不能为空')).toBeInTheDocument()
    expect(posted.at(-1)).toBeUndefined()

    await user.clear(within(dialog).getByLabelText('用户名'))
    await user.type(within(dialog).getByLabelText('用户名'), 'carol')
    await user.clear(within(dialog).getByLabelText('密码'))
    await user.type(within(dialog).getByLabelText('密码'), 'secret-pass')
    await user.clear(within(dialog).getByLabelText('邮箱'))
    await user.type(within(dialog).getByLabelText('分组'), 'vip')
    await user.clear(within(dialog).getByLabelText('初始额度'))
    // In dollars (the site shows money): $2 is 1000000 units.
    await user.type(within(dialog).getByLabelText('初始额度'), '2')
    await user.selectOptions(within(dialog).getByLabelText('角色'), '10')
    await user.type(within(dialog).getByLabelText('备注'), 'welcome')
    await user.click(within(dialog).getByTestId('user-form-submit'))
    await waitFor(() =>
      expect(posted.at(-1)).toEqual({
        username: 'carol',
        password: 'secret-pass',
        display_name: '',
        email: '',
        group: 'vip',
        quota: 1000000,
        role: 10,
        remark: 'welcome',
      }),
    )
    expect(await screen.findByText('用户已创建！')).toBeInTheDocument()
  })

  it('edits a user without sending an empty password', async () => {
    resetUserMocks([alice])
    signIn()
    const put = recordBodies('put', '*/api/user', alice)
    const { user } = openScreen('/panel/user')
    await user.click(within(await screen.findByTestId('user-row-2')).getByTestId('user-edit'))
    const dialog = await screen.findByTestId('user-form-dialog')
    expect(within(dialog).queryByLabelText('初始额度')).not.toBeInTheDocument()
    await user.clear(within(dialog).getByLabelText('显示名称'))
    await user.type(within(dialog).getByLabelText('显示名称'), 'Alice L.')
    await user.click(within(dialog).getByTestId('user-form-submit'))
    await waitFor(() =>
      expect(put.at(-1)).toEqual({ id: 2, username: 'alice', display_name: 'Alice L.', email: 'alice@example.com', group: 'default' }),
    )
  })

  it('changes quota with a remark; refuses deducting more than the balance', async () => {
    resetUserMocks([alice])
    signIn()
    let call: { id: string; body: unknown } | undefined
    server.use(
      http.post('*/api/user/quota/:id', async ({ request, params }) => {
        call = { id: String(params.id), body: await request.json() }
        return ok(alice)
      }),
    )
    const { user } = openScreen('/panel/user')
    await user.click(within(await screen.findByTestId('user-row-2')).getByTestId('user-quota-action'))
    const dialog = await screen.findByTestId('user-quota-dialog')
    expect(within(dialog).getByTestId('user-quota-balance')).toHaveTextContent('当前余额 $10.00')
    await user.click(within(dialog).getByTestId('user-quota-submit'))
    expect(await within(dialog).findByText('请填写变动额度')).toBeInTheDocument()
    await user.type(within(dialog).getByLabelText('变动额度'), '-12')
    await user.click(within(dialog).getByTestId('user-quota-submit'))
    expect(await within(dialog).findByText('扣除的额度不能超过用户余额')).toBeInTheDocument()
    expect(call).toBeUndefined()

    await user.clear(within(dialog).getByLabelText('变动额度'))
    await user.type(within(dialog).getByLabelText('变动额度'), '-1')
    expect(within(dialog).getByText('变动 $-1.00，调整后余额 $9.00')).toBeInTheDocument()
    await user.type(within(dialog).getByLabelText('备注'), 'refund')
    await user.click(within(dialog).getByTestId('user-quota-submit'))
    await waitFor(() => expect(call).toEqual({ id: '2', body: { quota: -500000, remark: 'refund' } }))
    expect(await screen.findByText('额度已调整！')).toBeInTheDocument()
  })

  it('disables, promotes and deletes through /api/user/manage, each after a confirmation', async () => {
    resetUserMocks([alice])
    signIn()
    const bodies: unknown[] = []
    server.use(
      http.post('*/api/user/manage', async ({ request }) => {
        bodies.push(await request.json())
        return ok({ id: 2, role: 1, status: 1 })
      }),
    )
    const { user } = openScreen('/panel/user')
    const row = await screen.findByTestId('user-row-2')
    await user.click(within(row).getByTestId('user-toggle'))
    let confirm = await screen.findByTestId('user-confirm-dialog')
    expect(confirm).toHaveTextContent('禁用用户？')
    expect(bodies).toEqual([])
    await user.click(within(confirm).getByTestId('user-confirm-dialog-confirm'))
    await waitFor(() => expect(bodies).toEqual([{ id: 2, action: 'disable' }]))
    expect(await screen.findByText('已禁用用户 alice！')).toBeInTheDocument()

    // Promotion is asked first; cancelling sends nothing.
    await user.click(within(row).getByTestId('user-promote'))
    confirm = await screen.findByTestId('user-confirm-dialog')
    expect(confirm).toHaveTextContent('“alice”将可以管理用户、渠道、价格与兑换码')
    await user.click(within(confirm).getByRole('button', { name: '取消' }))
    await waitFor(() => expect(screen.queryByTestId('user-confirm-dialog')).not.toBeInTheDocument())
    expect(bodies).toHaveLength(1)
    await user.click(within(row).getByTestId('user-promote'))
    await user.click(within(await screen.findByTestId('user-confirm-dialog')).getByTestId('user-confirm-dialog-confirm'))
    await waitFor(() => expect(bodies[1]).toEqual({ id: 2, action: 'promote' }))
    await user.click(within(row).getByTestId('user-delete'))
    await user.click(within(await screen.findByTestId('user-delete-dialog')).getByTestId('user-delete-dialog-confirm'))
    await waitFor(() => expect(bodies[2]).toEqual({ id: 2, action: 'delete' }))
  })

  it('an administrator (not root) cannot change roles or create administrators', async () => {
    resetUserMocks([alice])
    signIn({ ...mockRoot, id: 5, username: 'admin', role: 10 })
    const { user } = openScreen('/panel/user')
    const row = await screen.findByTestId('user-row-2')
    expect(within(row).queryByTestId('user-promote')).not.toBeInTheDocument()
    expect(within(row).getByTestId('user-toggle')).toBeInTheDocument()
    await user.click(screen.getByTestId('user-create'))
    const dialog = await screen.findByTestId('user-form-dialog')
    expect(within(dialog).queryByLabelText('角色')).not.toBeInTheDocument()
  })
})
