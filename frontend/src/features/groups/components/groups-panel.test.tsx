import { configure, screen, waitFor, within } from '@testing-library/react'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { ok, openDialog, openScreen, recordBodies, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { groupHandlers, mockGroup, resetGroupMocks } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const signIn = () => signInAs(mockRoot, groupHandlers)

describe('user groups screen', { timeout: 20_000 }, () => {
  it('lists groups with ratio, rate, visibility and promotion range', async () => {
    resetGroupMocks([
      mockGroup(),
      mockGroup({ id: 2, symbol: 'vip', name: 'VIP', ratio: 0.8, api_rate: 120, public: false, promotion: true, min_topup: 5_000_000, max_topup: 0 }),
      mockGroup({ id: 3, symbol: 'gold', name: 'Gold', promotion: true, min_topup: 500_000, max_topup: 5_000_000, enabled: false }),
    ])
    signIn()
    renderApp('/panel/user_group')
    const table = await screen.findByTestId('groups-table')
    const vip = within(table).getByTestId('group-row-2')
    expect(within(vip).getByTestId('group-ratio')).toHaveTextContent('0.8')
    expect(within(vip).getByTestId('group-api-rate')).toHaveTextContent('120')
    expect(vip).toHaveTextContent('不公开')
    await waitFor(() => expect(within(vip).getByTestId('group-promotion')).toHaveTextContent('累计充值 ≥ $10.00'))
    expect(within(table).getByTestId('group-row-3')).toHaveTextContent('累计充值 $1.00 ~ $10.00')
    expect(within(within(table).getByTestId('group-row-3')).getByTestId('group-toggle')).toHaveAttribute('aria-checked', 'false')
    const def = within(table).getByTestId('group-row-1')
    expect(within(def).getByTestId('group-api-rate')).toHaveTextContent('不限')
    expect(within(def).getByTestId('group-promotion')).toHaveTextContent('未开启')
  })

  it('shows the empty state', async () => {
    resetGroupMocks([])
    signIn()
    renderApp('/panel/user_group')
    expect(await screen.findByTestId('groups-empty')).toHaveTextContent('暂无用户分组')
  })

  it('validates the form and creates with the right body', async () => {
    resetGroupMocks([])
    signIn()
    const posted = recordBodies('post', '*/api/user_group', mockGroup({ id: 9 }), 201)
    const { user, dialog } = await openDialog('/panel/user_group', 'group-create', 'group-form-dialog')
    await user.type(within(dialog).getByLabelText('标识'), '9vip')
    await user.clear(within(dialog).getByLabelText('倍率'))
    await user.click(within(dialog).getByLabelText('自动升级'))
    await user.clear(within(dialog).getByLabelText('最低累计充值（额度）'))
    await user.type(within(dialog).getByLabelText('最低累计充值（额度）'), '1000')
    await user.clear(within(dialog).getByLabelText('最高累计充值（额度，不含）'))
    await user.type(within(dialog).getByLabelText('最高累计充值（额度，不含）'), '500')
    await user.click(within(dialog).getByTestId('group-form-submit'))
    expect(await within(dialog).findByText('标识须以英文字母开头，只能包含英文字母、数字、_ 和 -')).toBeInTheDocument()
    expect(within(dialog).getByText('名称不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText('倍率必须是不小于 0 的数字')).toBeInTheDocument()
    expect(within(dialog).getByText('最高累计充值必须大于最低值，或填 0 表示无上限')).toBeInTheDocument()
    expect(posted.at(-1)).toBeUndefined()

    await user.clear(within(dialog).getByLabelText('标识'))
    await user.type(within(dialog).getByLabelText('标识'), 'vip')
    await user.type(within(dialog).getByLabelText('名称'), 'VIP')
    await user.type(within(dialog).getByLabelText('倍率'), '0.8')
    await user.clear(within(dialog).getByLabelText('API 速率'))
    await user.type(within(dialog).getByLabelText('API 速率'), '60')
    await user.clear(within(dialog).getByLabelText('最高累计充值（额度，不含）'))
    await user.type(within(dialog).getByLabelText('最高累计充值（额度，不含）'), '0')
    await user.click(within(dialog).getByTestId('group-form-submit'))
    await waitFor(() =>
      expect(posted.at(-1)).toEqual({
        symbol: 'vip',
        name: 'VIP',
        ratio: 0.8,
        api_rate: 60,
        public: false,
        promotion: true,
        min_topup: 1000,
        max_topup: 0,
        enabled: true,
      }),
    )
    expect(await screen.findByText('用户分组已创建！')).toBeInTheDocument()
  })

  it('edits with the symbol fixed, toggles and deletes', async () => {
    resetGroupMocks([mockGroup({ id: 4, symbol: 'team', name: 'Team' })])
    signIn()
    const puts: unknown[] = []
    let deleted = ''
    server.use(
      http.put('*/api/user_group', async ({ request }) => {
        puts.push(await request.json())
        return ok(mockGroup({ id: 4 }))
      }),
      http.put('*/api/user_group/status', async ({ request }) => {
        puts.push(await request.json())
        return ok(mockGroup({ id: 4, enabled: false }))
      }),
      http.delete('*/api/user_group/:id', ({ params }) => {
        deleted = String(params.id)
        return HttpResponse.json(
          { success: false, message: 'group team cannot be deleted: 2 user(s) still use it', code: 'group_in_use' },
          { status: 409 },
        )
      }),
    )
    const { user } = openScreen('/panel/user_group')
    const row = await screen.findByTestId('group-row-4')
    await user.click(within(row).getByTestId('group-edit'))
    const dialog = await screen.findByTestId('group-form-dialog')
    expect(within(dialog).getByLabelText('标识')).toBeDisabled()
    await user.clear(within(dialog).getByLabelText('名称'))
    await user.type(within(dialog).getByLabelText('名称'), 'Team B')
    await user.click(within(dialog).getByTestId('group-form-submit'))
    await waitFor(() => expect(puts[0]).toMatchObject({ id: 4, symbol: 'team', name: 'Team B', ratio: 1 }))

    // Disabling a group is asked first.
    await user.click(within(await screen.findByTestId('group-row-4')).getByTestId('group-toggle'))
    const confirm = await screen.findByTestId('group-disable-dialog')
    expect(confirm).toHaveTextContent('（team）')
    expect(puts).toHaveLength(1)
    await user.click(within(confirm).getByTestId('group-disable-dialog-confirm'))
    await waitFor(() => expect(puts[1]).toEqual({ id: 4, enabled: false }))

    await user.click(within(screen.getByTestId('group-row-4')).getByTestId('group-delete'))
    await user.click(within(await screen.findByTestId('group-delete-dialog')).getByTestId('group-delete-dialog-confirm'))
    await waitFor(() => expect(deleted).toBe('4'))
    expect(await screen.findByText('错误：仍有用户或令牌在使用该分组，无法删除。')).toBeInTheDocument()
  })
})
