/** The gateway kinds the server supports: epay and Stripe Checkout. */
export const GATEWAY_TYPES = ['epay', 'stripe'] as const
export type GatewayType = (typeof GATEWAY_TYPES)[number]

/** The currencies a gateway charges in. */
export const CURRENCIES = ['CNY', 'USD'] as const
export type Currency = (typeof CURRENCIES)[number]

/** Epay's payment method: '' lets the payer choose on the epay cashier page. */
export const EPAY_PAY_TYPES = ['', 'alipay', 'wxpay', 'qqpay'] as const
export type EpayPayType = (typeof EPAY_PAY_TYPES)[number]

export const ORDER_STATUSES = ['pending', 'paid', 'expired', 'failed'] as const
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

/** A payment gateway as an administrator sees it (GET /api/payment): secrets are never returned. */
export type Gateway = EpayGateway | StripeGateway

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

/** Body of POST /api/payment (PUT adds `id`): only the chosen type's `config` fields. */
export type GatewayPayload = GatewayPayloadBase &
  ({ type: 'epay'; config: EpayConfigPayload } | { type: 'stripe'; config: StripeConfigPayload })

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
