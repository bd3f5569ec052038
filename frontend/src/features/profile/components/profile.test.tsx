import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { sessionStore, setUser } from '@/stores/session'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { ACCESS_TOKEN } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

function signIn(user = mockRoot) {
  resetAuthMocks(user)
  setUser(user)
}

describe('profile screen', () => {
  it('shows the user and saves the personal information', async () => {
    let body: unknown
    server.use(
      http.put('*/api/user/self', async ({ request }) => {
        body = await request.json()
        return HttpResponse.json({ success: true, message: '', data: { ...mockRoot, username: 'rooty', display_name: 'R' } })
      }),
    )
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
    expect(body).toBeUndefined()

    await user.clear(username)
    await user.type(username, ' rooty ')
    await user.clear(within(form).getByLabelText('显示名称'))
    await user.type(within(form).getByLabelText('显示名称'), 'R')
    await user.click(within(form).getByTestId('profile-info-submit'))
    await waitFor(() => expect(body).toEqual({ username: 'rooty', display_name: 'R' }))
    expect(await screen.findByText('个人信息已保存')).toBeInTheDocument()
    await waitFor(() => expect(sessionStore.get().user?.username).toBe('rooty'))
  })

  it('changes the password with the current one; mismatch and short passwords are refused', async () => {
    let body: unknown
    server.use(
      http.put('*/api/user/self', async ({ request }) => {
        body = await request.json()
        return HttpResponse.json({ success: true, message: '', data: mockRoot })
      }),
    )
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
    expect(body).toBeUndefined()

    await user.type(within(form).getByLabelText('当前密码'), 'old-password')
    await user.clear(within(form).getByLabelText('新密码'))
    await user.type(within(form).getByLabelText('新密码'), 'new-password-1')
    await user.clear(within(form).getByLabelText('确认新密码'))
    await user.type(within(form).getByLabelText('确认新密码'), 'new-password-1')
    await user.click(within(form).getByTestId('profile-password-submit'))
    await waitFor(() => expect(body).toEqual({ password: 'new-password-1', original_password: 'old-password' }))
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
