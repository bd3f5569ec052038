import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { mockStatus } from '@/features/site/mocks/handlers'
import { ok, openScreen, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { topupHandlers, VALID_CODE } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const member = { ...mockRoot, id: 2, username: 'alice', role: 1, quota: 250_000_000, used_quota: 500_000 }

const signIn = () => signInAs(member, topupHandlers)

describe('top-up screen', { timeout: 20_000 }, () => {
  it('shows the balance; without an online top-up it offers none and says where to go', async () => {
    signIn()
    renderApp('/panel/topup')
    await waitFor(() => expect(screen.getByTestId('topup-balance')).toHaveTextContent('$500.00'))
    expect(screen.getByText('$1.00')).toBeInTheDocument()
    // No gateway is enabled (GET /api/user/payment answers []): no payment form, the note instead.
    expect(await screen.findByTestId('topup-online-none')).toHaveTextContent('本站暂未开通在线充值')
    expect(screen.queryByTestId('topup-online')).not.toBeInTheDocument()
    expect(screen.queryByTestId('topup-online-form')).not.toBeInTheDocument()
  })

  it('without a gateway, opens the operator top-up link when there is one', async () => {
    server.use(
      http.get('*/api/status', () =>
        ok({ ...mockStatus, top_up_link: 'https://pay.example/top-up' }),
      ),
    )
    const open = vi.spyOn(window, 'open').mockImplementation(() => null)
    signIn()
    renderApp('/panel/topup')
    await userEvent.setup().click(await screen.findByTestId('topup-online'))
    expect(open).toHaveBeenCalledWith('https://pay.example/top-up', '_blank', 'noopener,noreferrer')
    open.mockRestore()
  })

  it('requires a code', async () => {
    signIn()
    let called = false
    server.use(
      http.post('*/api/user/topup', () => {
        called = true
        return ok({})
      }),
    )
    const { user } = openScreen('/panel/topup')
    await user.type(await screen.findByLabelText('兑换码'), '   ')
    await user.click(screen.getByTestId('topup-submit'))
    expect(await screen.findByText('请输入兑换码')).toBeInTheDocument()
    expect(called).toBe(false)
  })

  it('redeems a code, shows the new balance and refreshes the signed-in user', async () => {
    signIn()
    let body: unknown
    let selfCalls = 0
    server.use(
      http.post('*/api/user/topup', async ({ request }) => {
        body = await request.json()
        // The server has credited the user: /api/user/self now answers the new balance.
        resetAuthMocks({ ...member, quota: 251_000_000 })
        return ok({ quota: 1_000_000, balance: 251_000_000, group: 'vip' })
      }),
      http.get('*/api/user/self', () => {
        selfCalls++
        return ok({ ...member, quota: 251_000_000 })
      }),
    )
    const { user } = openScreen('/panel/topup')
    await screen.findByTestId('topup-form')
    const before = selfCalls
    await user.type(screen.getByLabelText('兑换码'), ` ${VALID_CODE} `)
    await user.click(screen.getByTestId('topup-submit'))
    await waitFor(() => expect(body).toEqual({ key: VALID_CODE }))
    expect(await screen.findByTestId('topup-result')).toHaveTextContent('兑换成功，获得 $2.00，当前余额 $502.00。')
    expect(screen.getByTestId('topup-balance')).toHaveTextContent('$502.00')
    expect(screen.getByTestId('topup-group')).toHaveTextContent('vip')
    expect(screen.getByLabelText('兑换码')).toHaveValue('')
    await waitFor(() => expect(selfCalls).toBeGreaterThan(before))
  })

  it('an invalid code is reported by the central handler, and no earlier success banner stays', async () => {
    signIn()
    const { user } = openScreen('/panel/topup')
    await user.type(await screen.findByLabelText('兑换码'), VALID_CODE)
    await user.click(screen.getByTestId('topup-submit'))
    expect(await screen.findByTestId('topup-result')).toBeInTheDocument()
    await user.type(screen.getByLabelText('兑换码'), 'nope')
    await user.click(screen.getByTestId('topup-submit'))
    expect(await screen.findByText('错误：兑换码无效或已被使用。')).toBeInTheDocument()
    expect(screen.queryByTestId('topup-result')).not.toBeInTheDocument()
    expect(within(screen.getByTestId('topup-form')).getByLabelText('兑换码')).toHaveValue('nope')
  })
})
