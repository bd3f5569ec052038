/** Answer of POST /api/user/topup. */
export interface TopupResult {
  /** Quota credited by the code. */
  quota: number
  /** The user's quota after the credit. */
  balance: number
  /** The user's group after any automatic promotion. */
  group: string
}

/** The currency a gateway charges in. */
export type Currency = 'CNY' | 'USD'

/** An enabled payment gateway as users see it (GET /api/user/payment). */
export interface PaymentGateway {
  uuid: string
  name: string
  /** The gateway's kind: epay, stripe, alipay or wxpay. */
  type: string
  icon: string
  /** USD per order. */
  fixed_fee: number
  /** A fraction: 0.05 is 5 %. */
  percent_fee: number
  currency: Currency
}

/** What an order of `amount` USD costs through a gateway (GET /api/user/order/quote). */
export interface Quote {
  /** USD, a whole number. */
  amount: number
  /** e.g. 0.9; 1 without a discount. */
  discount: number
  /** Decimal text in `currency`, e.g. "3.65". */
  fee: string
  /** What is paid: decimal text with 2 decimals in `currency`, e.g. "69.35". */
  order_amount: string
  currency: Currency
  /** Quota units credited once paid. */
  quota: number
}

/**
 * How to pay an order: open the gateway's page (epay, Stripe, Alipay's web cashier), or show a
 * code to scan with the payer's app (Alipay face-to-face `https://qr.alipay.com/…`, WeChat Pay
 * Native `weixin://wxpay/bizpayurl?…`).
 */
export type PayAction = { type: 'redirect'; url: string } | { type: 'qrcode'; content: string }

/** Answer of POST /api/user/order. */
export interface CreatedOrder extends Quote {
  trade_no: string
  pay: PayAction
}

/** `paid_late`: paid after the order expired (or failed), credited all the same. */
export type OrderStatus = 'pending' | 'paid' | 'paid_late' | 'expired' | 'failed'

/** Answer of GET /api/user/order/status. */
export interface OrderState {
  trade_no: string
  status: OrderStatus
  quota: number
}
