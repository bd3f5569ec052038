import { act, configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { mockStatus } from '@/features/site/mocks/handlers'
import { browser } from '@/lib/oauth'
import { setUser } from '@/stores/session'
import { ok, openScreen } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { qrCodeImage } from '@/components/qr-code'
import { server } from '@/test/server'
import { POLL_INTERVAL_MS, POLL_TIMEOUT_MS } from '../api/poll-order'
import { MOCK_PAY_URL, MOCK_TRADE_NO, MOCK_WXPAY_CODE, mockPaymentGateway, mockQuote, onlineTopupHandlers } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const member = { ...mockRoot, id: 2, username: 'alice', role: 1, quota: 250_000_000, used_quota: 500_000 }
const alipay = mockPaymentGateway()
const wxpay = mockPaymentGateway({ uuid: 'gw-wxpay', name: '微信支付', type: 'wxpay', percent_fee: 0 })
const paypal = mockPaymentGateway({ uuid: 'gw-paypal', name: 'PayPal', currency: 'USD', percent_fee: 0, fixed_fee: 0.3 })

function signIn(gateways = [alipay, paypal], opts: { min?: number } = {}) {
  resetAuthMocks(member)
  setUser(member)
  server.use(...onlineTopupHandlers(gateways, opts))
}

/** Every quote the screen asks for, as `uuid:amount`. */
function recordQuotes(): string[] {
  const asked: string[] = []
  server.events.on('request:start', ({ request }) => {
    const url = new URL(request.url)
    if (url.pathname === '/api/user/order/quote') {
      asked.push(`${url.searchParams.get('uuid')}:${url.searchParams.get('amount')}`)
    }
  })
  return asked
}

const amountField = () => screen.findByLabelText('充值金额（美元）')

afterEach(() => {
  server.events.removeAllListeners()
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('online top-up', { timeout: 30_000 }, () => {
  it('shows the gateways and, before paying, the quote: discount, fee and total in the gateway currency', async () => {
    signIn()
    const asked = recordQuotes()
    const { user } = openScreen('/panel/topup')
    const card = await screen.findByTestId('topup-online-card')
    // The first gateway is chosen; each shows its fees.
    expect(await within(card).findByTestId('topup-gateway-gw-alipay')).toHaveAttribute('aria-checked', 'true')
    expect(within(card).getByTestId('topup-gateway-gw-alipay')).toHaveTextContent('手续费 5%')
    expect(within(card).getByTestId('topup-gateway-gw-paypal')).toHaveTextContent('手续费 $0.30')
    expect(within(card).getByTestId('topup-quote-box')).toHaveTextContent('输入金额并选择支付方式后')
    expect(within(card).getByTestId('topup-pay')).toBeDisabled()

    await user.type(await amountField(), '10')
    const quote = await within(card).findByTestId('topup-quote')
    expect(within(quote).getByTestId('topup-quote-discount')).toHaveTextContent('减 10%')
    expect(within(quote).getByTestId('topup-quote-fee')).toHaveTextContent('¥3.29')
    expect(within(quote).getByTestId('topup-quote-total')).toHaveTextContent('¥68.99')
    expect(within(quote).getByTestId('topup-quote-quota')).toHaveTextContent('$10.00')
    expect(within(card).getByTestId('topup-pay')).toBeEnabled()
    expect(within(card).getByTestId('topup-pay')).toHaveTextContent('支付 ¥68.99')
    expect(asked.at(-1)).toBe('gw-alipay:10')
    // Typing is debounced: no quote for an amount that was only passed through.
    expect(asked).not.toContain('gw-alipay:1')

    // Another gateway: a new quote, in its currency.
    await user.click(within(card).getByTestId('topup-gateway-gw-paypal'))
    expect(within(card).getByTestId('topup-gateway-gw-paypal')).toHaveAttribute('aria-checked', 'true')
    await waitFor(() => expect(within(card).getByTestId('topup-quote-total')).toHaveTextContent('$9.30'))
    expect(within(card).getByTestId('topup-quote-fee')).toHaveTextContent('$0.30')
    expect(asked.at(-1)).toBe('gw-paypal:10')

    // A preset amount.
    await user.click(within(card).getByTestId('topup-preset-50'))
    expect(await amountField()).toHaveValue(50)
    await waitFor(() => expect(asked.at(-1)).toBe('gw-paypal:50'))
  })

  it('checks the amount as the server does: a positive whole number, the site minimum, at most 1000000', async () => {
    server.use(http.get('*/api/status', () => ok({ ...mockStatus, payment_min_amount: 15 })))
    signIn([alipay], { min: 15 })
    const asked = recordQuotes()
    const { user } = openScreen('/panel/topup')
    const input = await amountField()
    await waitFor(() => expect(input).toHaveAttribute('placeholder', '最低 15 美元'))
    // Presets below the minimum are not offered.
    expect(screen.queryByTestId('topup-preset-10')).not.toBeInTheDocument()
    expect(screen.getByTestId('topup-preset-20')).toBeInTheDocument()

    const card = screen.getByTestId('topup-online-card')
    const expectMessage = async (typed: string, message: string) => {
      await user.clear(input)
      if (typed) await user.type(input, typed)
      expect(await within(card).findByText(message)).toBeInTheDocument()
      expect(within(card).getByTestId('topup-pay')).toBeDisabled()
    }
    await expectMessage('0', '充值金额须为正整数')
    await expectMessage('2.5', '充值金额须为正整数')
    await expectMessage('10', '最低充值 15 美元')
    await expectMessage('1000001', '单笔最多充值 1000000 美元')
    await expectMessage('', '请输入充值金额')
    // None of these was sent for a quote.
    await new Promise((r) => setTimeout(r, 500))
    expect(asked).toEqual([])

    await user.type(input, '15')
    expect(await within(card).findByTestId('topup-quote-total')).toHaveTextContent('¥103.48')
    expect(within(card).queryByRole('alert')).not.toBeInTheDocument()
  })

  it('shows a refused quote in place, translated from its error code', async () => {
    // The server's minimum (PaymentMinAmount 20) is not in this site's status: the server says no.
    signIn([alipay], { min: 20 })
    const { user } = openScreen('/panel/topup')
    await user.type(await amountField(), '10')
    const error = await screen.findByTestId('topup-quote-error')
    expect(error).toHaveTextContent('充值金额无效：须为正整数，且不低于最低充值金额、不超过 1000000 美元。')
    expect(error).not.toHaveTextContent('minimum')
    expect(screen.getByTestId('topup-pay')).toBeDisabled()
  })

  it('an order the server refuses is reported in Chinese by the central handler', async () => {
    signIn([alipay])
    server.use(
      http.post('*/api/user/order', () =>
        HttpResponse.json({ success: false, message: 'payment gateway not found', code: 'payment_gateway_not_found' }, { status: 404 }),
      ),
    )
    const open = vi.spyOn(window, 'open').mockImplementation(() => null)
    const { user } = openScreen('/panel/topup')
    await user.type(await amountField(), '10')
    await screen.findByTestId('topup-quote-total')
    await user.click(screen.getByTestId('topup-pay'))
    expect(await screen.findByText('错误：该支付方式不存在或已停用。')).toBeInTheDocument()
    expect(open).not.toHaveBeenCalled()
    expect(screen.queryByTestId('topup-waiting')).not.toBeInTheDocument()
  })

  it('pays: opens the gateway page in a new tab, polls every 3 s until paid, then toasts and refreshes the balance', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true })
    signIn([alipay])
    let body: unknown
    const polls: string[] = []
    let selfCalls = 0
    server.use(
      http.post('*/api/user/order', async ({ request }) => {
        body = await request.json()
        return HttpResponse.json({
          success: true,
          message: '',
          data: {
            trade_no: MOCK_TRADE_NO,
            amount: 10,
            discount: 0.9,
            fee: '3.29',
            order_amount: '68.99',
            currency: 'CNY',
            quota: 5_000_000,
            pay: { type: 'redirect', url: MOCK_PAY_URL },
          },
        })
      }),
      http.get('*/api/user/order/status', ({ request }) => {
        polls.push(new URL(request.url).searchParams.get('trade_no') ?? '')
        if (polls.length < 2) return ok({ trade_no: MOCK_TRADE_NO, status: 'pending', quota: 5_000_000 })
        // Paid: the server has credited the user.
        resetAuthMocks({ ...member, quota: 255_000_000 })
        return ok({ trade_no: MOCK_TRADE_NO, status: 'paid', quota: 5_000_000 })
      }),
      http.get('*/api/user/self', () => {
        selfCalls++
        return ok(polls.length >= 2 ? { ...member, quota: 255_000_000 } : member)
      }),
    )
    const tab = { opener: window } as unknown as Window
    const open = vi.spyOn(window, 'open').mockImplementation(() => tab)
    renderApp('/panel/topup')
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime })
    await waitFor(() => expect(screen.getByTestId('topup-balance')).toHaveTextContent('$500.00'))
    await user.type(await amountField(), '10')
    await screen.findByTestId('topup-quote-total')
    await user.click(screen.getByTestId('topup-pay'))

    await waitFor(() => expect(open).toHaveBeenCalledWith(MOCK_PAY_URL, '_blank'))
    expect(body).toEqual({ uuid: 'gw-alipay', amount: 10 })
    // The new tab cannot reach back into the console.
    expect(tab.opener).toBeNull()
    const waiting = await screen.findByTestId('topup-waiting')
    expect(waiting).toHaveTextContent('正在等待支付结果')
    expect(within(waiting).getByTestId('topup-order-trade-no')).toHaveTextContent(MOCK_TRADE_NO)
    expect(waiting).toHaveTextContent('¥68.99')
    expect(within(waiting).getByTestId('topup-pay-link')).toHaveAttribute('href', MOCK_PAY_URL)
    expect(polls).toEqual([])

    const before = selfCalls
    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS))
    await waitFor(() => expect(polls).toEqual([MOCK_TRADE_NO]))
    expect(screen.getByTestId('topup-waiting')).toBeInTheDocument()

    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS))
    await waitFor(() => expect(polls).toHaveLength(2))
    expect(await screen.findByText('支付成功！到账 $10.00')).toBeInTheDocument()
    expect(await screen.findByTestId('topup-order-message')).toHaveTextContent('支付成功，已到账 $10.00。')
    // The signed-in user is read again: the balance follows.
    await waitFor(() => expect(selfCalls).toBeGreaterThan(before))
    await waitFor(() => expect(screen.getByTestId('topup-balance')).toHaveTextContent('$510.00'))

    // Settled: no more polling.
    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS * 3))
    expect(polls).toHaveLength(2)

    await user.click(screen.getByTestId('topup-order-again'))
    expect(await screen.findByTestId('topup-online-form')).toBeInTheDocument()
  })

  it('pays by scanning: shows the WeChat Pay code as a QR image with the link to copy, and polls until paid', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true })
    signIn([wxpay])
    const polls: string[] = []
    server.use(
      http.get('*/api/user/order/status', ({ request }) => {
        polls.push(new URL(request.url).searchParams.get('trade_no') ?? '')
        const status = polls.length < 2 ? 'pending' : 'paid'
        return ok({ trade_no: MOCK_TRADE_NO, status, quota: 5_000_000 })
      }),
    )
    const open = vi.spyOn(window, 'open').mockImplementation(() => null)
    renderApp('/panel/topup')
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime })
    await user.type(await amountField(), '10')
    // 10 % off, no fee: 9 × 7.3.
    expect(await screen.findByTestId('topup-quote-total')).toHaveTextContent('¥65.70')
    await user.click(screen.getByTestId('topup-pay'))

    const waiting = await screen.findByTestId('topup-waiting')
    // The code to scan, named for the app that reads it and the amount.
    const code = await within(waiting).findByRole('img', { name: '请使用微信扫码支付 ¥65.70' })
    expect(code).toHaveAttribute('data-testid', 'topup-pay-qrcode')
    expect(code).toHaveAttribute('src', await qrCodeImage(MOCK_WXPAY_CODE))
    expect(decodeURIComponent(code.getAttribute('src') ?? '')).toMatch(/^data:image\/svg\+xml;charset=utf-8,<svg[^>]*viewBox="0 0 \d+ \d+"/)
    expect(within(waiting).queryByTestId('topup-pay-qrcode-pending')).not.toBeInTheDocument()
    // The content stays to copy (or to open on a phone); no page is opened.
    expect(within(waiting).getByTestId('topup-pay-content')).toHaveValue(MOCK_WXPAY_CODE)
    expect(within(waiting).getByTestId('topup-pay-link')).toHaveAttribute('href', MOCK_WXPAY_CODE)
    expect(waiting).toHaveTextContent('请用对应的支付应用扫描二维码')
    expect(open).not.toHaveBeenCalled()

    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS))
    await waitFor(() => expect(polls).toEqual([MOCK_TRADE_NO]))
    expect(screen.getByTestId('topup-pay-qrcode')).toBeInTheDocument()
    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS))
    await waitFor(() => expect(polls).toHaveLength(2))
    expect(await screen.findByTestId('topup-order-message')).toHaveTextContent('支付成功，已到账 $10.00。')
    expect(screen.queryByTestId('topup-pay-qrcode')).not.toBeInTheDocument()
  })

  it('names Alipay for an Alipay code to scan', async () => {
    const alipayQr = mockPaymentGateway({ uuid: 'gw-alipay-qr', name: '支付宝当面付', type: 'alipay' })
    signIn([alipayQr])
    server.use(
      http.post('*/api/user/order', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: {
            ...mockQuote(alipayQr, 10),
            trade_no: MOCK_TRADE_NO,
            pay: { type: 'qrcode', content: 'https://qr.alipay.com/bax00000000000000000000' },
          },
        }),
      ),
    )
    const { user } = openScreen('/panel/topup')
    await user.type(await amountField(), '10')
    await screen.findByTestId('topup-quote-total')
    await user.click(screen.getByTestId('topup-pay'))
    const code = await screen.findByRole('img', { name: '请使用支付宝扫码支付 ¥68.99' })
    expect(code).toHaveAttribute('src', await qrCodeImage('https://qr.alipay.com/bax00000000000000000000'))
    expect(screen.getByTestId('topup-pay-content')).toHaveValue('https://qr.alipay.com/bax00000000000000000000')
  })

  it('an order refused for too many unpaid orders says so, not "too many requests"', async () => {
    signIn([wxpay])
    server.use(
      http.post('*/api/user/order', () =>
        HttpResponse.json(
          { success: false, message: 'too many unpaid orders', code: 'payment_too_many_orders' },
          { status: 429 },
        ),
      ),
    )
    const { user } = openScreen('/panel/topup')
    await user.type(await amountField(), '10')
    await screen.findByTestId('topup-quote-total')
    await user.click(screen.getByTestId('topup-pay'))
    expect(
      await screen.findByText('错误：未支付的订单过多（最多 5 笔）：请先完成其中一笔的支付，或等待它们过期（30 分钟后）再下单。'),
    ).toBeInTheDocument()
    expect(screen.queryByTestId('topup-waiting')).not.toBeInTheDocument()
  })

  it('falls back to this tab when the new tab is blocked', async () => {
    signIn([alipay])
    const open = vi.spyOn(window, 'open').mockImplementation(() => null)
    const assign = vi.spyOn(browser, 'assign').mockImplementation(() => {})
    const { user } = openScreen('/panel/topup')
    await user.type(await amountField(), '10')
    await screen.findByTestId('topup-quote-total')
    await user.click(screen.getByTestId('topup-pay'))
    await waitFor(() => expect(assign).toHaveBeenCalledWith(MOCK_PAY_URL))
    expect(open).toHaveBeenCalledWith(MOCK_PAY_URL, '_blank')
  })

  it('stops waiting after 10 minutes, and on leaving the page', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true })
    signIn([alipay])
    let polls = 0
    server.use(
      http.get('*/api/user/order/status', () => {
        polls++
        return ok({ trade_no: MOCK_TRADE_NO, status: 'pending', quota: 5_000_000 })
      }),
    )
    vi.spyOn(window, 'open').mockImplementation(() => ({ opener: null }) as unknown as Window)
    const view = renderApp('/panel/topup')
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime })
    await user.type(await amountField(), '10')
    await screen.findByTestId('topup-quote-total')
    await user.click(screen.getByTestId('topup-pay'))
    await screen.findByTestId('topup-waiting')
    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS))
    await waitFor(() => expect(polls).toBe(1))

    // Ten minutes later, the next answer is still "pending": polling stops and says so.
    vi.setSystemTime(Date.now() + POLL_TIMEOUT_MS)
    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS))
    expect(await screen.findByTestId('topup-order-message')).toHaveTextContent('长时间未收到支付结果')
    const after = polls
    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS * 3))
    expect(polls).toBe(after)

    // A new order, then the page is left: no more polling.
    await user.click(screen.getByTestId('topup-order-again'))
    await user.type(await amountField(), '10')
    await screen.findByTestId('topup-quote-total')
    await user.click(screen.getByTestId('topup-pay'))
    await screen.findByTestId('topup-waiting')
    view.unmount()
    const left = polls
    await act(() => vi.advanceTimersByTimeAsync(POLL_INTERVAL_MS * 3))
    expect(polls).toBe(left)
  })

  it('back from the gateway (?trade_no=), asks at once and shows an expired order', async () => {
    signIn([alipay])
    server.use(
      http.get('*/api/user/order/status', ({ request }) =>
        HttpResponse.json({
          success: true,
          message: '',
          data: { trade_no: new URL(request.url).searchParams.get('trade_no'), status: 'expired', quota: 5_000_000 },
        }),
      ),
    )
    renderApp(`/panel/topup?trade_no=${MOCK_TRADE_NO}`)
    const message = await screen.findByTestId('topup-order-message')
    expect(message).toHaveTextContent('订单已过期，未完成支付。')
    expect(screen.getByTestId('topup-order-trade-no')).toHaveTextContent(MOCK_TRADE_NO)
    // Settled: a reload does not ask again.
    await waitFor(() => expect(screen.getByTestId('location')).toHaveAttribute('data-search', ''))
    await userEvent.setup().click(screen.getByTestId('topup-order-again'))
    expect(await screen.findByTestId('topup-online-form')).toBeInTheDocument()
  })

  it('an order paid after it expired is shown paid late, credited', async () => {
    signIn([alipay])
    server.use(
      http.get('*/api/user/order/status', ({ request }) =>
        HttpResponse.json({
          success: true,
          message: '',
          data: { trade_no: new URL(request.url).searchParams.get('trade_no'), status: 'paid_late', quota: 5_000_000 },
        }),
      ),
    )
    renderApp(`/panel/topup?trade_no=${MOCK_TRADE_NO}`)
    const message = await screen.findByTestId('topup-order-message')
    expect(message).toHaveTextContent('订单过期后才完成支付，仍已到账')
    // Settled: a reload does not ask again.
    await waitFor(() => expect(screen.getByTestId('location')).toHaveAttribute('data-search', ''))
  })

  it('a failed payment and an unknown order are said in Chinese', async () => {
    signIn([alipay])
    server.use(
      http.get('*/api/user/order/status', ({ request }) =>
        new URL(request.url).searchParams.get('trade_no') === 'SBFAILED'
          ? ok({ trade_no: 'SBFAILED', status: 'failed', quota: 0 })
          : HttpResponse.json({ success: false, message: 'order not found', code: 'order_not_found' }, { status: 404 }),
      ),
    )
    const first = renderApp('/panel/topup?trade_no=SBFAILED')
    expect(await screen.findByTestId('topup-order-message')).toHaveTextContent('支付失败，订单已关闭。')
    first.unmount()
    renderApp('/panel/topup?trade_no=SBNOPE')
    expect(await screen.findByTestId('topup-order-message')).toHaveTextContent('无法查询订单状态：找不到该订单。')
  })
})
