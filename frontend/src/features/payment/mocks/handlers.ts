import { http, HttpResponse } from 'msw'
import type { AlipayGateway, EpayGateway, Gateway, GatewayPayload, Order, StripeGateway, WxpayGateway } from '../types'

const NOW = 1_735_689_600 // 2025-01-01 00:00:00 UTC

/** An epay gateway (with its key saved). */
export function mockGateway(overrides: Partial<EpayGateway> = {}): EpayGateway {
  return {
    id: 1,
    uuid: 'gw-0001',
    name: '支付宝',
    type: 'epay',
    icon: 'https://pay.example.com/alipay.png',
    enable: true,
    fixed_fee: 0,
    percent_fee: 0.05,
    currency: 'CNY',
    notify_domain: '',
    sort: 0,
    created_at: NOW,
    config: { url: 'https://pay.example.com', pid: '1001', pay_type: 'alipay' },
    secrets_set: { key: true },
    ...overrides,
  }
}

/** A Stripe Checkout gateway (both secrets saved; its config is always listed as `{}`). */
export function mockStripeGateway(overrides: Partial<StripeGateway> = {}): StripeGateway {
  return {
    id: 3,
    uuid: 'gw-0003',
    name: 'Stripe',
    type: 'stripe',
    icon: 'https://pay.example.com/stripe.png',
    enable: true,
    fixed_fee: 0.3,
    percent_fee: 0.029,
    currency: 'USD',
    notify_domain: '',
    sort: 0,
    created_at: NOW,
    config: {},
    secrets_set: { secret_key: true, webhook_secret: true },
    ...overrides,
  }
}

/** Alipay's public key as its console shows it (bare base64), for the mocks and tests. */
export const MOCK_ALIPAY_PUBLIC_KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAv8alipay+public/key=='

/** WeChat Pay's public key as it is downloaded (PEM). */
export const MOCK_WXPAY_PUBLIC_KEY = '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwx/wechat+pay==\n-----END PUBLIC KEY-----'

/** An Alipay gateway in page mode (its private key saved; Alipay's public key is listed). */
export function mockAlipayGateway(overrides: Partial<AlipayGateway> = {}): AlipayGateway {
  return {
    id: 4,
    uuid: 'gw-0004',
    name: '支付宝官方',
    type: 'alipay',
    icon: 'https://pay.example.com/alipay.png',
    enable: true,
    fixed_fee: 0,
    percent_fee: 0.006,
    currency: 'CNY',
    notify_domain: '',
    sort: 0,
    created_at: NOW,
    config: { app_id: '2021000123456789', mode: 'page', alipay_public_key: MOCK_ALIPAY_PUBLIC_KEY },
    secrets_set: { private_key: true },
    ...overrides,
  }
}

/** A WeChat Pay (Native, API v3) gateway (both secrets saved). */
export function mockWxpayGateway(overrides: Partial<WxpayGateway> = {}): WxpayGateway {
  return {
    id: 5,
    uuid: 'gw-0005',
    name: '微信支付官方',
    type: 'wxpay',
    icon: 'https://pay.example.com/wxpay.png',
    enable: true,
    fixed_fee: 0,
    percent_fee: 0.006,
    currency: 'CNY',
    notify_domain: 'https://cb.example.com',
    sort: 0,
    created_at: NOW,
    config: {
      mch_id: '1900000109',
      app_id: 'wx8888888888888888',
      serial_no: '5157F09EFDC096DE15EBE81A47057A7232F1B8E1',
      platform_key_id: 'PUB_KEY_ID_0114232134912410000000000000',
      platform_public_key: MOCK_WXPAY_PUBLIC_KEY,
    },
    secrets_set: { private_key: true, api_v3_key: true },
    ...overrides,
  }
}

export function mockOrder(overrides: Partial<Order> = {}): Order {
  return {
    id: 1,
    trade_no: 'SB20250101000001',
    user_id: 2,
    username: 'alice',
    gateway_id: 1,
    gateway_name: '支付宝',
    gateway_no: '',
    amount: 10,
    discount: 0.9,
    fee: '3.65',
    order_amount: '69.35',
    currency: 'CNY',
    quota: 5_000_000,
    status: 'pending',
    created_at: NOW,
    paid_at: 0,
    ...overrides,
  }
}

/** A fake gateway and order store: list (keyword, filters, paging), create, update, delete. */
let gateways: Gateway[] = []
let orders: Order[] = []
let nextId = 1

export function resetPaymentMocks(initial: Gateway[] = [], initialOrders: Order[] = []): void {
  gateways = initial.map((g) => structuredClone(g))
  orders = initialOrders.map((o) => ({ ...o }))
  nextId = Math.max(0, ...gateways.map((g) => g.id)) + 1
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })
const refuse = (status: number, code: string, message: string) =>
  HttpResponse.json({ success: false, message, code }, { status })

function paged<T>(rows: T[], url: URL) {
  const page = Number(url.searchParams.get('page') ?? 1)
  const size = Number(url.searchParams.get('size') ?? 10)
  return ok({ data: rows.slice((page - 1) * size, page * size), page, size, total_count: rows.length })
}

/** The server's checks, enough of them to answer like it does. */
function invalid(body: GatewayPayload, creating: boolean) {
  if (!body.name?.trim()) return refuse(400, 'payment_field_invalid', 'name is required')
  if (body.type === 'stripe') {
    const { secret_key: secretKey = '', webhook_secret: webhookSecret = '' } = body.config ?? {}
    if (creating && !secretKey) return refuse(400, 'payment_config_invalid', 'config.secret_key is required')
    if (creating && !webhookSecret) return refuse(400, 'payment_config_invalid', 'config.webhook_secret is required')
    if (secretKey && !/^(sk|rk)_/.test(secretKey)) {
      return refuse(400, 'payment_config_invalid', 'config.secret_key must start with sk_ or rk_')
    }
    if (webhookSecret && !webhookSecret.startsWith('whsec_')) {
      return refuse(400, 'payment_config_invalid', 'config.webhook_secret must start with whsec_')
    }
    return null
  }
  if (body.type === 'alipay' || body.type === 'wxpay') {
    if (body.currency !== 'CNY') return refuse(400, 'payment_config_invalid', `${body.type} charges in CNY only`)
    const { app_id: appId = '', private_key: privateKey = '' } = body.config ?? {}
    if (!appId) return refuse(400, 'payment_config_invalid', 'config.app_id is required')
    if (creating && !privateKey) return refuse(400, 'payment_config_invalid', 'config.private_key is required')
    if (body.type === 'alipay') {
      if (!['qrcode', 'page'].includes(body.config.mode)) return refuse(400, 'payment_config_invalid', 'config.mode must be qrcode or page')
      if (!body.config.alipay_public_key) return refuse(400, 'payment_config_invalid', 'config.alipay_public_key is required')
      return null
    }
    const apiV3Key = body.config.api_v3_key ?? ''
    if (!/^\d+$/.test(body.config.mch_id ?? '')) return refuse(400, 'payment_config_invalid', 'config.mch_id must be digits')
    if ((creating || apiV3Key) && apiV3Key.length !== 32) {
      return refuse(400, 'payment_config_invalid', 'config.api_v3_key must be 32 characters')
    }
    return null
  }
  if (body.type !== 'epay') return refuse(400, 'payment_type_unsupported', 'unsupported gateway type')
  if (!/^https?:\/\//.test(body.config?.url ?? '') || !body.config?.pid) {
    return refuse(400, 'payment_config_invalid', 'config.url must be an http(s) URL and config.pid is required')
  }
  if (creating && !body.config.key) return refuse(400, 'payment_config_invalid', 'config.key is required')
  return null
}

/** The gateway as listed after a write: secrets dropped, `secrets_set` updated (a type change starts afresh). */
function stored(body: GatewayPayload, base: Gateway): Gateway {
  const fields = {
    id: base.id,
    uuid: base.uuid,
    created_at: base.created_at,
    name: body.name,
    icon: body.icon,
    enable: body.enable,
    fixed_fee: body.fixed_fee,
    percent_fee: body.percent_fee,
    currency: body.currency,
    notify_domain: body.notify_domain,
    sort: body.sort,
  }
  if (body.type === 'stripe') {
    const was = base.type === 'stripe' ? base.secrets_set : { secret_key: false, webhook_secret: false }
    return {
      ...fields,
      type: 'stripe',
      config: {},
      secrets_set: {
        secret_key: was.secret_key || body.config.secret_key !== '',
        webhook_secret: was.webhook_secret || body.config.webhook_secret !== '',
      },
    }
  }
  if (body.type === 'alipay') {
    const { private_key: privateKey, ...config } = body.config
    const had = base.type === 'alipay' && base.secrets_set.private_key
    return { ...fields, type: 'alipay', config, secrets_set: { private_key: had || privateKey !== '' } }
  }
  if (body.type === 'wxpay') {
    const { private_key: privateKey, api_v3_key: apiV3Key, ...config } = body.config
    const was = base.type === 'wxpay' ? base.secrets_set : { private_key: false, api_v3_key: false }
    return {
      ...fields,
      type: 'wxpay',
      config,
      secrets_set: { private_key: was.private_key || privateKey !== '', api_v3_key: was.api_v3_key || apiV3Key !== '' },
    }
  }
  const { key, ...config } = body.config
  const had = base.type === 'epay' && base.secrets_set.key
  return { ...fields, type: 'epay', config, secrets_set: { key: had || key !== '' } }
}

export const paymentHandlers = [
  http.get('*/api/payment/order', ({ request }) => {
    const url = new URL(request.url)
    const tradeNo = url.searchParams.get('trade_no') ?? ''
    const userId = url.searchParams.get('user_id') ?? ''
    const status = url.searchParams.get('status') ?? ''
    const matched = orders
      .filter((o) => !tradeNo || o.trade_no === tradeNo)
      .filter((o) => !userId || String(o.user_id) === userId)
      .filter((o) => !status || o.status === status)
      .sort((a, b) => b.id - a.id)
    return paged(matched, url)
  }),
  http.get('*/api/payment', ({ request }) => {
    const url = new URL(request.url)
    const keyword = url.searchParams.get('keyword') ?? ''
    const matched = gateways
      .filter((g) => !keyword || g.name.includes(keyword))
      .sort((a, b) => b.sort - a.sort || a.id - b.id)
    return paged(matched, url)
  }),
  http.get('*/api/payment/:id', ({ params }) => {
    const g = gateways.find((x) => x.id === Number(params.id))
    return g ? ok(g) : refuse(404, 'payment_gateway_not_found', 'payment gateway not found')
  }),
  http.post('*/api/payment', async ({ request }) => {
    const body = (await request.json()) as GatewayPayload
    const bad = invalid(body, true)
    if (bad) return bad
    const id = nextId++
    const g = stored(body, mockGateway({ id, uuid: `gw-${String(id).padStart(4, '0')}`, secrets_set: { key: false } }))
    gateways.push(g)
    return ok(g)
  }),
  http.put('*/api/payment', async ({ request }) => {
    const body = (await request.json()) as GatewayPayload & { id: number }
    const i = gateways.findIndex((g) => g.id === body.id)
    if (i < 0) return refuse(404, 'payment_gateway_not_found', 'payment gateway not found')
    const bad = invalid(body, false)
    if (bad) return bad
    gateways[i] = stored(body, gateways[i]!)
    return ok(gateways[i])
  }),
  http.delete('*/api/payment/:id', ({ params }) => {
    gateways = gateways.filter((g) => g.id !== Number(params.id))
    return ok(null)
  }),
]
