import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { openDialog, recordBodies, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { mockInvoice, resetInvoiceMocks } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

const signIn = (user = mockRoot) => signInAs(user)

beforeEach(() => resetInvoiceMocks())

describe('invoices screen', () => {
  it('lists the invoices with status, amount and PDF link; opens the detail', async () => {
    resetInvoiceMocks([
      mockInvoice({ id: 2, date: '2024-12', month: '2024-12' }),
      mockInvoice({ id: 1, date: '2024-11', month: '2024-11', status: 2, amount: 500_000, paid_at: 1_733_000_000 }),
    ])
    signIn()
    renderApp('/panel/invoice')
    const table = await screen.findByTestId('invoices-table')
    const dec = within(table).getByTestId('invoice-row-2024-12')
    expect(dec).toHaveTextContent('未支付')
    await waitFor(() => expect(within(dec).getByTestId('invoice-amount')).toHaveTextContent('$2.00'))
    expect(within(table).getByTestId('invoice-row-2024-11')).toHaveTextContent('已支付')
    expect(within(dec).getByTestId('invoice-pdf-link')).toHaveAttribute('href', '/api/user/invoice/pdf?date=2024-12&lang=zh_CN')

    const user = userEvent.setup()
    await user.click(within(dec).getByTestId('invoice-detail-link'))
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel/invoice/detail/2024-12'))
    const detail = await screen.findByTestId('invoice-detail')
    expect(detail).toHaveTextContent('2024-12 账单')
    expect(within(detail).getByTestId('invoice-requests')).toHaveTextContent('120')
    expect(screen.getByTestId('invoice-model-gpt-4o-mini')).toHaveTextContent('$1.20')
  })

  it('shows the empty state', async () => {
    signIn()
    renderApp('/panel/invoice')
    expect(await screen.findByTestId('invoices-empty')).toHaveTextContent('还没有账单')
  })

  it('an unknown month shows the server message and a not-found state', async () => {
    signIn()
    renderApp('/panel/invoice/detail/2030-01')
    expect(await screen.findByTestId('invoice-not-found')).toHaveTextContent('没有 2030-01 的账单')
    expect(await screen.findByText(/错误：要找的内容不存在或已被删除/)).toBeInTheDocument()
  })

  it('root generates a month: the month must be YYYY-MM and ended', async () => {
    const body = recordBodies('post', '*/api/invoice/generate', { generated: 3 })
    signIn()
    const { user, dialog } = await openDialog('/panel/invoice', 'invoice-generate', 'invoice-generate-dialog')
    const month = within(dialog).getByLabelText('月份（YYYY-MM）')
    await user.clear(month)
    await user.type(month, '2024-13')
    await user.click(within(dialog).getByTestId('invoice-generate-submit'))
    expect(await within(dialog).findByText('月份格式应为 YYYY-MM')).toBeInTheDocument()
    await user.clear(month)
    await user.type(month, '2999-01')
    await user.click(within(dialog).getByTestId('invoice-generate-submit'))
    expect(await within(dialog).findByText('只能生成已结束的月份')).toBeInTheDocument()
    expect(body.at(-1)).toBeUndefined()
    await user.clear(month)
    await user.type(month, '2024-11')
    await user.click(within(dialog).getByRole('switch', { name: '重新生成' }))
    await user.click(within(dialog).getByTestId('invoice-generate-submit'))
    await waitFor(() => expect(body.at(-1)).toEqual({ month: '2024-11', regenerate: true }))
    expect(await screen.findByText('已生成 2024-11 的 3 份账单')).toBeInTheDocument()
  })

  it('only root sees the generate button', async () => {
    signIn({ ...mockRoot, role: 10 })
    renderApp('/panel/invoice')
    expect(await screen.findByTestId('invoices-empty')).toBeInTheDocument()
    expect(screen.queryByTestId('invoice-generate')).not.toBeInTheDocument()
  })
})
