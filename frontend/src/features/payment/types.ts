/**
 * The gateway kinds the server supports: epay, Stripe Checkout, Alipay (openapi, RSA2) and
 * WeChat Pay (Native, API v3).
 */
export const GATEWAY_TYPES = ['epay', 'stripe', 'alipay', 'wxpay'] as const
export type GatewayType = (typeof GATEWAY_TYPES)[number]

/** The gateway kinds that charge in yuan only: the server refuses another currency for them. */
export const CNY_ONLY_TYPES = ['alipay', 'wxpay'] as const satisfies readonly GatewayType[]

/** Whether a gateway of `type` charges in CNY only. */
export function chargesInCnyOnly(type: string): boolean {
  return (CNY_ONLY_TYPES as readonly string[]).includes(type)
}

/** The currencies a gateway charges in. */
export const CURRENCIES = ['CNY', 'USD'] as const
export type Currency = (typeof CURRENCIES)[number]

/** Epay's payment method: '' lets the payer choose on the epay cashier page. */
export const EPAY_PAY_TYPES = ['', 'alipay', 'wxpay', 'qqpay'] as const
export type EpayPayType = (typeof EPAY_PAY_TYPES)[number]

/**
 * How Alipay is paid: `qrcode` shows a code the payer scans (当面付, alipay.trade.precreate),
 * `page` sends the payer to Alipay's web cashier (电脑网站支付, alipay.trade.page.pay).
 */
export const ALIPAY_MODES = ['page', 'qrcode'] as const
export type AlipayMode = (typeof ALIPAY_MODES)[number]

/** `paid_late`: paid after the order expired (or failed), credited all the same. */
export const ORDER_STATUSES = ['pending', 'paid', 'paid_late', 'expired', 'failed'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

/** What every gateway has, whatever its type. */
interface GatewayBase {
  id: number
  uuid: string
  name: string
  icon: string
  enable: boolean
  /** USD per order. */
  fixed_fee: number
  /** A fraction: 0.05 is 5 %. */
  percent_fee: number
  currency: Currency
  /** The callback origin (e.g. https://pay.example.com); empty: the site's ServerAddress. */
  notify_domain: string
  sort: number
  created_at: number
}

/**
 * An epay gateway as listed: without its key; `config` is `{}` when the server cannot open it
 * (sealed under another server secret).
 */
export interface EpayGateway extends GatewayBase {
  type: 'epay'
  config: { url?: string; pid?: string; pay_type?: EpayPayType }
  secrets_set: { key: boolean }
}

/** A Stripe Checkout gateway as listed: both of its secrets are write-only, so `config` is `{}`. */
export interface StripeGateway extends GatewayBase {
  type: 'stripe'
  config: Record<string, never>
  secrets_set: { secret_key: boolean; webhook_secret: boolean }
}

/**
 * An Alipay gateway as listed: without its private key; `config` is `{}` when the server cannot
 * open it. Alipay's public key is not a secret: it is listed.
 */
export interface AlipayGateway extends GatewayBase {
  type: 'alipay'
  config: { app_id?: string; mode?: AlipayMode; alipay_public_key?: string }
  secrets_set: { private_key: boolean }
}

/**
 * A WeChat Pay (Native, API v3) gateway as listed: without the merchant private key and the
 * API v3 key; `config` is `{}` when the server cannot open it.
 */
export interface WxpayGateway extends GatewayBase {
  type: 'wxpay'
  config: {
    mch_id?: string
    app_id?: string
    serial_no?: string
    platform_key_id?: string
    platform_public_key?: string
  }
  secrets_set: { private_key: boolean; api_v3_key: boolean }
}

/** A payment gateway as an administrator sees it (GET /api/payment): secrets are never returned. */
export type Gateway = EpayGateway | StripeGateway | AlipayGateway | WxpayGateway

/** What POST /api/payment takes besides `type` and `config`. */
interface GatewayPayloadBase {
  name: string
  icon: string
  enable: boolean
  fixed_fee: number
  percent_fee: number
  currency: Currency
  notify_domain: string
  sort: number
}

/** Epay's `config` in a write: on PUT an empty `key` keeps the stored key. */
export interface EpayConfigPayload {
  url: string
  pid: string
  pay_type: EpayPayType
  key: string
}

/**
 * Stripe's `config` in a write: the secret key (`sk_…` or `rk_…`) and the webhook signing secret
 * (`whsec_…`), both required on POST; on PUT an empty one keeps the stored value.
 */
export interface StripeConfigPayload {
  secret_key: string
  webhook_secret: string
}

/**
 * Alipay's `config` in a write: the application's RSA private key (PEM, PKCS#8 or PKCS#1, or bare
 * base64) is required on POST; on PUT an empty one keeps the stored key.
 */
export interface AlipayConfigPayload {
  app_id: string
  mode: AlipayMode
  alipay_public_key: string
  private_key: string
}

/**
 * WeChat Pay's `config` in a write: the merchant API private key (`apiclient_key.pem`) and the
 * API v3 key (32 characters) are required on POST; on PUT an empty one keeps the stored value.
 */
export interface WxpayConfigPayload {
  mch_id: string
  app_id: string
  /** The merchant API certificate's serial number (hex). */
  serial_no: string
  /** The WeChat Pay public key ID (`PUB_KEY_ID_…`) or the platform certificate's serial number. */
  platform_key_id: string
  /** The WeChat Pay public key (PEM) that its answers and notifications are verified with. */
  platform_public_key: string
  private_key: string
  api_v3_key: string
}

/** Body of POST /api/payment (PUT adds `id`): only the chosen type's `config` fields. */
export type GatewayPayload = GatewayPayloadBase &
  (
    | { type: 'epay'; config: EpayConfigPayload }
    | { type: 'stripe'; config: StripeConfigPayload }
    | { type: 'alipay'; config: AlipayConfigPayload }
    | { type: 'wxpay'; config: WxpayConfigPayload }
  )

/** A top-up order as an administrator sees it (GET /api/payment/order). */
export interface Order {
  id: number
  trade_no: string
  user_id: number
  username: string
  gateway_id: number
  gateway_name: string
  /** The gateway's own transaction number, once it has one. */
  gateway_no: string
  /** USD, a whole number. */
  amount: number
  /** e.g. 0.9; 1 without a discount. */
  discount: number
  /** Decimal text in the order's currency, e.g. "3.65". */
  fee: string
  /** What is paid: decimal text with 2 decimals in the order's currency, e.g. "69.35". */
  order_amount: string
  currency: Currency
  /** Quota units credited. */
  quota: number
  status: OrderStatus
  created_at: number
  /** Unix seconds; 0 while not paid. */
  paid_at: number
}
