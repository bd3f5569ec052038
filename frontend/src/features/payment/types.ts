/** The gateway kinds the server supports. */
export const GATEWAY_TYPES = ['epay'] as const
export type GatewayType = (typeof GATEWAY_TYPES)[number]

/** The currencies a gateway charges in. */
export const CURRENCIES = ['CNY', 'USD'] as const
export type Currency = (typeof CURRENCIES)[number]

/** Epay's payment method: '' lets the payer choose on the epay cashier page. */
export const EPAY_PAY_TYPES = ['', 'alipay', 'wxpay', 'qqpay'] as const
export type EpayPayType = (typeof EPAY_PAY_TYPES)[number]

export const ORDER_STATUSES = ['pending', 'paid', 'expired', 'failed'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

/** A payment gateway as an administrator sees it (GET /api/payment): the merchant key is never returned. */
export interface Gateway {
  id: number
  uuid: string
  name: string
  type: GatewayType
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
  /** Without its key; `{}` when the server cannot open it (sealed under another server secret). */
  config: { url?: string; pid?: string; pay_type?: EpayPayType }
  secrets_set: { key: boolean }
}

/** Body of POST /api/payment (PUT adds `id`; there an empty `config.key` keeps the stored key). */
export interface GatewayPayload {
  name: string
  type: GatewayType
  icon: string
  enable: boolean
  fixed_fee: number
  percent_fee: number
  currency: Currency
  notify_domain: string
  sort: number
  config: { url: string; pid: string; pay_type: EpayPayType; key: string }
}

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
