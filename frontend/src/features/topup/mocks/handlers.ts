import { http, HttpResponse } from 'msw'
import type { CreatedOrder, PaymentGateway, Quote } from '../types'

export const VALID_CODE = 'a'.repeat(32)

export function mockPaymentGateway(overrides: Partial<PaymentGateway> = {}): PaymentGateway {
  return {
    uuid: 'gw-alipay',
    name: '支付宝',
    type: 'epay',
    icon: '',
    fixed_fee: 0,
    percent_fee: 0.05,
    currency: 'CNY',
    ...overrides,
  }
}

export const MOCK_PAY_URL = 'https://pay.example.com/submit.php?out_trade_no=SB0001'
/** What WeChat Pay (Native) answers an order with: the payment code's content, to show as a QR code. */
export const MOCK_WXPAY_CODE = 'weixin://wxpay/bizpayurl?pr=abc'
export const MOCK_TRADE_NO = 'SB0001'
const USD_RATE = 7.3
const QUOTA_PER_USD = 500_000

/** To the cent, half a cent away from zero (as the server rounds). */
const cents = (x: number) => (Math.round(x * 100 + 1e-6) / 100).toFixed(2)

/**
 * The server's quote: 10 % off from $10 (RechargeDiscount), the fees on the discounted amount,
 * all at the exchange rate of the gateway's currency: $10 through a 5 % CNY gateway is a fee of
 * 9 × 0.05 × 7.3 = ¥3.29 and (9 + 0.45) × 7.3 = ¥68.99 to pay.
 */
export function mockQuote(gateway: PaymentGateway, amount: number): Quote {
  const rate = gateway.currency === 'CNY' ? USD_RATE : 1
  const discount = amount >= 10 ? 0.9 : 1
  const discounted = amount * discount
  const feeUsd = discounted * gateway.percent_fee + gateway.fixed_fee
  return {
    amount,
    discount,
    fee: cents(feeUsd * rate),
    order_amount: cents((discounted + feeUsd) * rate),
    currency: gateway.currency,
    quota: amount * QUOTA_PER_USD,
  }
}

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data })
const refuse = (status: number, code: string, message: string) =>
  HttpResponse.json({ success: false, message, code }, { status })

/**
 * Online top-up as the server answers it, through `gateways` (enabled ones), with a minimum of
 * `min` USD: a WeChat Pay order is paid by scanning a code, the others on the gateway's page.
 * Orders stay pending; tests answer the status themselves.
 */
export function onlineTopupHandlers(gateways: PaymentGateway[], { min = 1 }: { min?: number } = {}) {
  const check = (uuid: string | null, amountText: string | null | undefined) => {
    const gateway = gateways.find((g) => g.uuid === uuid)
    const amount = Number(amountText)
    if (!/^\d+$/.test(String(amountText ?? '')) || amount < 1) {
      return { error: refuse(400, 'payment_amount_invalid', 'amount must be a positive integer') }
    }
    if (amount < min) return { error: refuse(400, 'payment_amount_invalid', `amount is below the minimum of ${min}`) }
    if (amount > 1_000_000) return { error: refuse(400, 'payment_amount_invalid', 'amount is above 1000000') }
    if (!gateway) return { error: refuse(404, 'payment_gateway_not_found', 'payment gateway not found') }
    return { gateway, amount }
  }
  return [
    http.get('*/api/user/payment', () => ok(gateways)),
    http.get('*/api/user/order/quote', ({ request }) => {
      const url = new URL(request.url)
      const r = check(url.searchParams.get('uuid'), url.searchParams.get('amount'))
      return 'error' in r ? r.error : ok(mockQuote(r.gateway, r.amount))
    }),
    http.post('*/api/user/order', async ({ request }) => {
      const body = (await request.json()) as { uuid?: string; amount?: number }
      const r = check(body.uuid ?? null, body.amount === undefined ? null : String(body.amount))
      if ('error' in r) return r.error
      const created: CreatedOrder = {
        ...mockQuote(r.gateway, r.amount),
        trade_no: MOCK_TRADE_NO,
        pay: r.gateway.type === 'wxpay' ? { type: 'qrcode', content: MOCK_WXPAY_CODE } : { type: 'redirect', url: MOCK_PAY_URL },
      }
      return ok(created)
    }),
    http.get('*/api/user/order/status', ({ request }) =>
      ok({ trade_no: new URL(request.url).searchParams.get('trade_no'), status: 'pending', quota: 0 }),
    ),
  ]
}

/** One valid code worth 1 000 000 quota; anything else is refused like the server does. No gateway is enabled. */
export const topupHandlers = [
  http.post('*/api/user/topup', async ({ request }) => {
    const { key } = (await request.json()) as { key?: string }
    if (key?.trim().toLowerCase() === VALID_CODE) {
      return HttpResponse.json({ success: true, message: '', data: { quota: 1_000_000, balance: 251_000_000, group: 'default' } })
    }
    return HttpResponse.json(
      { success: false, message: 'the code is invalid or has already been used', code: 'invalid_redemption_code' },
      { status: 400 },
    )
  }),
  ...onlineTopupHandlers([]),
]
