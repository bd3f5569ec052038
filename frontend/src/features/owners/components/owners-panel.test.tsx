import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { ok, openDialog, openScreen } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockOwners, ownerHandlers, resetOwnerMocks } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

function signIn(user = mockRoot) {
  resetAuthMocks(user)
  setUser(user)
  // Ours first, whatever other features mock for the same path.
  server.use(...ownerHandlers)
}

describe('model owners screen', { timeout: 20_000 }, () => {
  it('lists the owners with their kind and filters them', async () => {
    resetOwnerMocks(mockOwners)
    signIn()
    renderApp('/panel/model_ownedby')
    const table = await screen.findByTestId('owners-table')
    expect(within(table).getAllByTestId('owner-name').map((n) => n.textContent)).toEqual(['OpenAI', 'Anthropic', 'Acme AI'])
    expect(within(table).getByTestId('owner-row-1000')).toHaveTextContent('自定义')
    expect(within(table).getByTestId('owner-row-14')).toHaveTextContent('内置')

    const user = userEvent.setup()
    await user.type(screen.getByTestId('owner-search'), 'acme')
    expect(within(table).getAllByTestId('owner-name').map((n) => n.textContent)).toEqual(['Acme AI'])
    await user.clear(screen.getByTestId('owner-search'))
    await user.type(screen.getByTestId('owner-search'), 'zzz')
    expect(await screen.findByTestId('owners-empty')).toHaveTextContent('没有符合条件的模型归属')
  })

  it('pages a long list on the client', async () => {
    resetOwnerMocks(Array.from({ length: 25 }, (_, i) => ({ id: 1000 + i, name: `owner-${i}`, icon: '' })))
    signIn()
    renderApp('/panel/model_ownedby')
    const table = await screen.findByTestId('owners-table')
    expect(within(table).getAllByTestId('owner-name')).toHaveLength(20)
    expect(screen.getByTestId('pagination-total')).toHaveTextContent('共 25 条')
    await userEvent.setup().click(screen.getByRole('button', { name: '下一页' }))
    expect(within(screen.getByTestId('owners-table')).getAllByTestId('owner-name').map((n) => n.textContent)).toEqual([
      'owner-20',
      'owner-21',
      'owner-22',
      'owner-23',
      'owner-24',
    ])
  })

  it('shows the empty state', async () => {
    resetOwnerMocks([])
    signIn()
    renderApp('/panel/model_ownedby')
    expect(await screen.findByTestId('owners-empty')).toHaveTextContent('暂无模型归属')
  })

  it('validates the form, then creates with the right body', async () => {
    resetOwnerMocks([])
    signIn()
    let posted: unknown
    server.use(
      http.post('*/api/model_ownedby', async ({ request }) => {
        posted = await request.json()
        return HttpResponse.json({ success: true, message: '' }, { status: 201 })
      }),
    )
    const { user, dialog } = await openDialog('/panel/model_ownedby', 'owner-create', 'owner-form-dialog')
    await user.type(within(dialog).getByLabelText('ID'), '999')
    await user.type(within(dialog).getByLabelText('图标地址'), 'ftp://x')
    await user.click(within(dialog).getByTestId('owner-form-submit'))
    expect(await within(dialog).findByText('ID 必须是不小于 1000 的整数')).toBeInTheDocument()
    expect(within(dialog).getByText('名称不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText('图标地址必须以 http:// 或 https:// 开头')).toBeInTheDocument()
    expect(posted).toBeUndefined()

    await user.clear(within(dialog).getByLabelText('ID'))
    await user.type(within(dialog).getByLabelText('ID'), '1001')
    await user.type(within(dialog).getByLabelText('名称'), ' Acme ')
    await user.clear(within(dialog).getByLabelText('图标地址'))
    await user.type(within(dialog).getByLabelText('图标地址'), 'https://example.com/a.png/')
    await user.click(within(dialog).getByTestId('owner-form-submit'))
    await waitFor(() => expect(posted).toEqual({ id: 1001, name: 'Acme', icon: 'https://example.com/a.png' }))
    expect(await screen.findByText('模型归属已创建！')).toBeInTheDocument()
  })

  it('edits (id fixed) and deletes; a refusal is toasted by the central handler', async () => {
    resetOwnerMocks(mockOwners)
    signIn()
    let put: unknown
    server.use(
      http.put('*/api/model_ownedby', async ({ request }) => {
        put = await request.json()
        return ok({ id: 1000 })
      }),
      http.delete('*/api/model_ownedby/:id', () =>
        HttpResponse.json(
          { success: false, message: '2 prices name this owner; change them first', code: 'owner_in_use' },
          { status: 409 },
        ),
      ),
    )
    const { user } = openScreen('/panel/model_ownedby')
    const row = await screen.findByTestId('owner-row-1000')
    await user.click(within(row).getByTestId('owner-edit'))
    const dialog = await screen.findByTestId('owner-form-dialog')
    expect(within(dialog).getByLabelText('ID')).toBeDisabled()
    await user.clear(within(dialog).getByLabelText('名称'))
    await user.type(within(dialog).getByLabelText('名称'), 'Acme Labs')
    await user.click(within(dialog).getByTestId('owner-form-submit'))
    await waitFor(() => expect(put).toEqual({ id: 1000, name: 'Acme Labs', icon: 'https://example.com/acme.png' }))

    await user.click(within(await screen.findByTestId('owner-row-1000')).getByTestId('owner-delete'))
    const confirm = await screen.findByTestId('owner-delete-dialog')
    await user.click(within(confirm).getByTestId('owner-delete-dialog-confirm'))
    expect(await screen.findByText('错误：仍有价格使用该模型所有者，请先修改这些价格。')).toBeInTheDocument()
  })

  it('is not shown to ordinary users: they are told they lack the permission', async () => {
    signIn({ ...mockRoot, role: 1 })
    renderApp('/panel/model_ownedby')
    expect(await screen.findByTestId('no-permission')).toBeInTheDocument()
    expect(screen.queryByTestId('owners-table')).not.toBeInTheDocument()
  })
})
