import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { ok, openDialog, openScreen, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { codeOf, mockRedemption, redemptionHandlers, resetRedemptionMocks } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const signIn = () => signInAs(mockRoot, redemptionHandlers)

describe('redemption codes screen', { timeout: 20_000 }, () => {
  it('lists codes with status and quota; filters by status; pages', async () => {
    resetRedemptionMocks([
      ...Array.from({ length: 11 }, (_, i) => mockRedemption({ id: i + 1, name: `batch-${i + 1}`, code: codeOf(i + 1) })),
      mockRedemption({ id: 12, name: 'used-one', status: 3, redeemed_at: 1_735_700_000, quota: 1_000_000 }),
      mockRedemption({ id: 13, name: 'off', status: 2 }),
    ])
    signIn()
    renderApp('/panel/redemption')
    const table = await screen.findByTestId('redemptions-table')
    const used = within(table).getByTestId('redemption-row-12')
    expect(within(used).getByTestId('redemption-status')).toHaveTextContent('已使用')
    await waitFor(() => expect(within(used).getByTestId('redemption-quota')).toHaveTextContent('$2.00'))
    // A used code cannot be edited or switched.
    expect(within(used).queryByTestId('redemption-edit')).not.toBeInTheDocument()
    expect(within(table).getByTestId('redemption-row-13')).toHaveTextContent('已禁用')
    expect(within(table).getByTestId('redemption-row-4')).toHaveTextContent('未使用')
    expect(screen.getByTestId('pagination-total')).toHaveTextContent('共 13 条')

    const user = userEvent.setup()
    await user.selectOptions(screen.getByTestId('redemption-status-filter'), '3')
    await waitFor(() => expect(screen.getByTestId('pagination-total')).toHaveTextContent('共 1 条'))
    expect(within(screen.getByTestId('redemptions-table')).getAllByTestId('redemption-name').map((n) => n.textContent)).toEqual([
      'used-one',
    ])
  })

  it('shows the empty state', async () => {
    resetRedemptionMocks([])
    signIn()
    renderApp('/panel/redemption')
    expect(await screen.findByTestId('redemptions-empty')).toHaveTextContent('暂无兑换码')
  })

  it('validates, creates a batch and shows the codes to copy', async () => {
    resetRedemptionMocks([])
    signIn()
    let posted: unknown
    server.use(
      http.post('*/api/redemption', async ({ request }) => {
        posted = await request.json()
        return HttpResponse.json(
          { success: true, message: '', data: { codes: ['a'.repeat(32), 'b'.repeat(32)] } },
          { status: 201 },
        )
      }),
    )
    const { user, dialog } = await openDialog('/panel/redemption', 'redemption-create', 'redemption-form-dialog')
    await user.clear(within(dialog).getByLabelText('生成数量'))
    await user.type(within(dialog).getByLabelText('生成数量'), '101')
    await user.clear(within(dialog).getByLabelText('额度'))
    await user.type(within(dialog).getByLabelText('额度'), '-5')
    await user.click(within(dialog).getByTestId('redemption-form-submit'))
    expect(await within(dialog).findByText('名称不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText('额度须为不小于 0 的金额（最多 6 位小数）')).toBeInTheDocument()
    expect(within(dialog).getByText('数量必须是 1 到 100 之间的整数')).toBeInTheDocument()
    expect(posted).toBeUndefined()

    await user.type(within(dialog).getByLabelText('名称'), 'promo')
    await user.clear(within(dialog).getByLabelText('额度'))
    // Dollars (the site shows money): $1 is 500000 units.
    await user.type(within(dialog).getByLabelText('额度'), '1')
    expect(within(dialog).getByText('= 500,000 额度单位')).toBeInTheDocument()
    await user.clear(within(dialog).getByLabelText('生成数量'))
    await user.type(within(dialog).getByLabelText('生成数量'), '2')
    await user.click(within(dialog).getByTestId('redemption-form-submit'))
    await waitFor(() => expect(posted).toEqual({ name: 'promo', quota: 500000, count: 2 }))

    const codes = await screen.findByTestId('redemption-codes-dialog')
    expect(within(codes).getByTestId('redemption-codes')).toHaveValue(`${'a'.repeat(32)}\n${'b'.repeat(32)}`)
    const writeText = vi.fn().mockResolvedValue(undefined)
    const clipboard = Object.getOwnPropertyDescriptor(navigator, 'clipboard')
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
    // Test files share one jsdom window (isolate: false): put the clipboard back.
    onTestFinished(() => {
      if (clipboard) Object.defineProperty(navigator, 'clipboard', clipboard)
      else Reflect.deleteProperty(navigator, 'clipboard')
    })
    await user.click(within(codes).getByTestId('redemption-codes-copy'))
    expect(writeText).toHaveBeenCalledWith(`${'a'.repeat(32)}\n${'b'.repeat(32)}`)
    expect(await screen.findByText('复制成功！')).toBeInTheDocument()
  })

  it('edits, disables and deletes a code', async () => {
    resetRedemptionMocks([mockRedemption({ id: 7, name: 'seven', quota: 100 })])
    signIn()
    const puts: unknown[] = []
    let deleted = ''
    server.use(
      http.put('*/api/redemption', async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>
        puts.push(body)
        return ok({ ...mockRedemption({ id: 7 }), ...body })
      }),
      http.delete('*/api/redemption/:id', ({ params }) => {
        deleted = String(params.id)
        return HttpResponse.json({ success: true, message: '' })
      }),
    )
    const { user } = openScreen('/panel/redemption')
    const row = await screen.findByTestId('redemption-row-7')
    await user.click(within(row).getByTestId('redemption-edit'))
    const dialog = await screen.findByTestId('redemption-form-dialog')
    expect(within(dialog).queryByLabelText('生成数量')).not.toBeInTheDocument()
    await user.clear(within(dialog).getByLabelText('额度'))
    await user.type(within(dialog).getByLabelText('额度'), '0.0005')
    await user.click(within(dialog).getByTestId('redemption-form-submit'))
    await waitFor(() => expect(puts[0]).toEqual({ id: 7, name: 'seven', quota: 250 }))

    await user.click(within(await screen.findByTestId('redemption-row-7')).getByTestId('redemption-toggle'))
    await waitFor(() => expect(puts[1]).toEqual({ id: 7, status: 2 }))
    expect(await screen.findByText('兑换码已禁用！')).toBeInTheDocument()

    await user.click(within(screen.getByTestId('redemption-row-7')).getByTestId('redemption-delete'))
    await user.click(within(await screen.findByTestId('redemption-delete-dialog')).getByTestId('redemption-delete-dialog-confirm'))
    await waitFor(() => expect(deleted).toBe('7'))
  })
})
