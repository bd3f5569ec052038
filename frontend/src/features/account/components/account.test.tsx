import { act, configure, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { siteStore } from '@/stores/site'
import { ok, openScreen, recordBodies } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { RESET_PASSWORD } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

function withEmailVerification() {
  server.use(
    http.get('*/api/status', () =>
      ok({ system_name: 'Switchboard Test', email_verification: true }),
    ),
  )
}

describe('register screen', () => {
  it('validates, then posts the account and goes to /login', async () => {
    const body = recordBodies('post', '*/api/user/register', { id: 5 }, 201)
    const { user } = openScreen('/register?aff=INV1')
    await user.click(await screen.findByTestId('register-submit'))
    expect(await screen.findByText('用户名不能为空')).toBeInTheDocument()
    expect(screen.getByText('密码不能为空')).toBeInTheDocument()

    await user.type(screen.getByLabelText('用户名'), 'newbie')
    await user.type(screen.getByLabelText('密码'), 'password-1')
    await user.type(screen.getByLabelText('确认密码'), 'password-2')
    await user.type(screen.getByLabelText('邮箱（可选）'), 'not-an-email')
    await user.click(screen.getByTestId('register-submit'))
    expect(await screen.findByText('两次输入的密码不一致')).toBeInTheDocument()
    expect(screen.getByText('邮箱格式不正确')).toBeInTheDocument()
    expect(body.at(-1)).toBeUndefined()

    await user.clear(screen.getByLabelText('确认密码'))
    await user.type(screen.getByLabelText('确认密码'), 'password-1')
    await user.clear(screen.getByLabelText('邮箱（可选）'))
    await user.click(screen.getByTestId('register-submit'))
    await waitFor(() =>
      expect(body.at(-1)).toEqual({ username: 'newbie', password: 'password-1', email: '', verification_code: '', aff_code: 'INV1' }),
    )
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/login'))
    expect(localStorage.getItem('aff')).toBe('INV1')
  })

  it('with e-mail verification: requires the code, sends it and counts down before a resend', async () => {
    withEmailVerification()
    const asked: string[] = []
    server.use(
      http.get('*/api/verification', ({ request }) => {
        asked.push(new URL(request.url).searchParams.get('email') ?? '')
        return HttpResponse.json({ success: true, message: 'verification code sent' })
      }),
    )
    renderApp('/register')
    await waitFor(() => expect(siteStore.get().info.email_verification).toBe(true))
    const user = userEvent.setup()
    const send = await screen.findByTestId('register-send-code')
    await user.click(send)
    expect(await screen.findByText('邮箱不能为空')).toBeInTheDocument()
    await user.type(screen.getByLabelText('邮箱'), 'me@example.com')
    await user.click(send)
    await waitFor(() => expect(asked).toEqual(['me@example.com']))
    await waitFor(() => expect(send).toHaveTextContent(/秒后重发/))
    expect(send).toBeDisabled()
    await user.click(screen.getByTestId('register-submit'))
    expect(await screen.findByText('验证码不能为空')).toBeInTheDocument()
  })

  it('a taken username is reported by the central handler', async () => {
    const { user } = openScreen('/register')
    await user.type(await screen.findByLabelText('用户名'), 'taken')
    await user.type(screen.getByLabelText('密码'), 'password-1')
    await user.type(screen.getByLabelText('确认密码'), 'password-1')
    await user.click(screen.getByTestId('register-submit'))
    // The server's code, in the user's language (not the server's English message).
    expect(await screen.findByText('错误：该用户名已被占用（仅大小写不同的用户名视为相同）。')).toBeInTheDocument()
    expect(screen.getByTestId('location')).toHaveTextContent('/register')
  })
})

describe('password reset', () => {
  it('asks for a link by e-mail', async () => {
    const asked: string[] = []
    server.use(
      http.get('*/api/reset_password', ({ request }) => {
        asked.push(new URL(request.url).searchParams.get('email') ?? '')
        return HttpResponse.json({ success: true, message: 'ok' })
      }),
    )
    const { user } = openScreen('/reset')
    await user.type(await screen.findByLabelText('邮箱'), 'bad')
    await user.click(screen.getByTestId('reset-submit'))
    expect(await screen.findByText('邮箱格式不正确')).toBeInTheDocument()
    await user.clear(screen.getByLabelText('邮箱'))
    await user.type(screen.getByLabelText('邮箱'), 'me@example.com')
    await user.click(screen.getByTestId('reset-submit'))
    expect(await screen.findByTestId('reset-sent')).toHaveTextContent('me@example.com')
    expect(asked).toEqual(['me@example.com'])
    expect(screen.getByTestId('reset-submit')).toBeDisabled()
  })

  it('confirms with the link and shows the new password once', async () => {
    renderApp('/user/reset?email=me%40example.com&token=good')
    expect(await screen.findByTestId('reset-email')).toHaveTextContent('me@example.com')
    const user = userEvent.setup()
    await user.click(screen.getByTestId('reset-confirm'))
    expect(await screen.findByTestId('reset-new-password')).toHaveValue(RESET_PASSWORD)
  })

  it('an invalid link says so', async () => {
    renderApp('/user/reset')
    expect(await screen.findByTestId('reset-invalid')).toHaveTextContent('重置链接无效')
  })

  it('an expired token shows the server message and a hint', async () => {
    const { user } = openScreen('/user/reset?email=me%40example.com&token=old')
    await user.click(await screen.findByTestId('reset-confirm'))
    expect(await screen.findByText('错误：重置链接无效或已过期。')).toBeInTheDocument()
    expect(screen.getByTestId('reset-failed')).toBeInTheDocument()
  })
})

describe('about page', () => {
  it('shows the default text without content', async () => {
    renderApp('/about')
    expect(await screen.findByTestId('about-default')).toHaveTextContent('AI 模型接口网关')
  })

  it('renders the operator HTML, or a URL in a frame', async () => {
    server.use(http.get('*/api/about', () => ok('<p>Hello <b>there</b></p>')))
    const view = renderApp('/about')
    expect(await screen.findByTestId('about-content')).toHaveTextContent('Hello there')
    view.unmount()
    server.use(http.get('*/api/about', () => ok('https://example.com/about')))
    await act(async () => {
      renderApp('/about')
    })
    expect(await screen.findByTestId('about-frame')).toHaveAttribute('src', 'https://example.com/about')
  })
})
