import type { TFunction } from 'i18next'
import { z } from 'zod'
import {
  CURRENCIES,
  EPAY_PAY_TYPES,
  type Currency,
  type EpayPayType,
  type Gateway,
  type GatewayPayload,
  type GatewayType,
} from './types'

export const NAME_MAX = 64
export const ICON_MAX = 255
export const PID_MAX = 64
export const KEY_MAX = 256
/** The largest fixed fee, in USD. */
export const FIXED_FEE_MAX = 1_000_000
/** A Stripe secret key: a standard (`sk_…`) or restricted (`rk_…`) one, never a publishable `pk_…`. */
export const STRIPE_SECRET_KEY = /^(?:sk|rk)_/
/** A Stripe webhook signing secret. */
export const STRIPE_WEBHOOK_SECRET = /^whsec_/

/** Every field of both gateway types: only the chosen type's provider fields are checked and sent. */
export interface GatewayFormValues {
  name: string
  type: GatewayType
  icon: string
  enable: boolean
  fixed_fee: string
  percent_fee: string
  currency: Currency
  notify_domain: string
  sort: string
  /** Epay. */
  url: string
  pid: string
  pay_type: EpayPayType
  /** Epay. Create: required. Edit: blank keeps the stored key. */
  key: string
  /** Stripe. Create: required. Edit: blank keeps the stored one. */
  secret_key: string
  webhook_secret: string
}

export function gatewayFormDefaults(g?: Gateway): GatewayFormValues {
  const secrets = { key: '', secret_key: '', webhook_secret: '' }
  if (!g) {
    return {
      name: '',
      type: 'epay',
      icon: '',
      enable: true,
      fixed_fee: '0',
      percent_fee: '0',
      currency: 'CNY',
      notify_domain: '',
      sort: '0',
      url: '',
      pid: '',
      pay_type: '',
      ...secrets,
    }
  }
  // A configuration sealed under another server secret is listed as `{}`; Stripe's is always `{}`.
  const epay = g.type === 'epay' ? g.config : {}
  return {
    name: g.name,
    type: g.type,
    icon: g.icon,
    enable: g.enable,
    fixed_fee: String(g.fixed_fee),
    percent_fee: String(g.percent_fee),
    currency: g.currency,
    notify_domain: g.notify_domain,
    sort: String(g.sort),
    url: epay.url ?? '',
    pid: epay.pid ?? '',
    pay_type: epay.pay_type ?? '',
    ...secrets,
  }
}

const DECIMAL = /^\d+(\.\d+)?$/
const WHOLE = /^\d+$/

function parseHttpUrl(value: string): URL | undefined {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '' ? url : undefined
  } catch {
    return undefined
  }
}

/** An absolute http(s) address with a host. */
export function isHttpUrl(value: string): boolean {
  return parseHttpUrl(value) !== undefined
}

/** An http(s) origin such as https://pay.example.com (a trailing slash allowed, no path). */
export function isHttpOrigin(value: string): boolean {
  const url = parseHttpUrl(value)
  return url !== undefined && url.pathname === '/' && url.search === '' && url.hash === '' && !/[?#]/.test(value)
}

/**
 * Payment gateway form, mirroring the server's checks: name required (at most 64 characters),
 * icon (at most 255) and currency required, the fixed fee (USD per order) from 0 to 1 000 000,
 * the percent fee a fraction from 0 up to (not including) 1 (0.05 is 5 %), sort a whole number
 * >= 0, the callback address empty or an http(s) origin. Then, per type:
 * - epay: the site an http(s) address, the merchant id required (at most 64), the merchant key
 *   (at most 256);
 * - stripe: the secret key starting with `sk_` or `rk_`, the webhook signing secret with `whsec_`
 *   (each at most 256, trimmed like the server does).
 * Secrets are required unless the gateway being edited already has this type's (`storedType`):
 * then a blank one keeps the stored value (sent as "").
 */
export function createGatewaySchema(t: TFunction, { storedType }: { storedType?: GatewayType } = {}) {
  const common = {
    name: z
      .string()
      .trim()
      .min(1, t('payment:validation.nameRequired'))
      .max(NAME_MAX, t('payment:validation.nameTooLong', { max: NAME_MAX })),
    icon: z
      .string()
      .trim()
      .min(1, t('payment:validation.iconRequired'))
      .max(ICON_MAX, t('payment:validation.iconTooLong', { max: ICON_MAX })),
    enable: z.boolean(),
    fixed_fee: z
      .string()
      .trim()
      .refine((v) => DECIMAL.test(v) && Number(v) <= FIXED_FEE_MAX, t('payment:validation.fixedFee', { max: FIXED_FEE_MAX })),
    percent_fee: z
      .string()
      .trim()
      .refine((v) => DECIMAL.test(v) && Number(v) < 1, t('payment:validation.percentFee')),
    currency: z.enum(CURRENCIES, { message: t('payment:validation.currencyRequired') }),
    notify_domain: z
      .string()
      .trim()
      .refine((v) => v === '' || isHttpOrigin(v), t('payment:validation.notifyDomain')),
    sort: z.string().trim().regex(WHOLE, t('payment:validation.sort')),
  }
  // Each branch takes every form field (so its input is the whole form) but checks only its own.
  const unchecked = {
    url: z.string(),
    pid: z.string(),
    pay_type: z.enum(EPAY_PAY_TYPES),
    key: z.string(),
    secret_key: z.string(),
    webhook_secret: z.string(),
  }
  const keepsEpay = storedType === 'epay'
  const keepsStripe = storedType === 'stripe'

  const epay = z.object({
    ...common,
    ...unchecked,
    type: z.literal('epay'),
    url: z
      .string()
      .trim()
      .min(1, t('payment:validation.urlRequired'))
      .refine(isHttpUrl, t('payment:validation.url')),
    pid: z
      .string()
      .trim()
      .min(1, t('payment:validation.pidRequired'))
      .max(PID_MAX, t('payment:validation.pidTooLong', { max: PID_MAX })),
    pay_type: z.enum(EPAY_PAY_TYPES),
    // Sent as typed (the server keeps a key's spaces); blank is sent as "" (keep the stored key).
    key: z
      .string()
      .max(KEY_MAX, t('payment:validation.keyTooLong', { max: KEY_MAX }))
      .refine((v) => keepsEpay || v.trim() !== '', t('payment:validation.keyRequired')),
  })

  // Stripe's secrets never contain spaces: a pasted one is trimmed; blank is sent as "".
  const stripe = z.object({
    ...common,
    ...unchecked,
    type: z.literal('stripe'),
    secret_key: z
      .string()
      .trim()
      .max(KEY_MAX, t('payment:validation.secretKeyTooLong', { max: KEY_MAX }))
      .refine((v) => keepsStripe || v !== '', t('payment:validation.secretKeyRequired'))
      .refine((v) => v === '' || STRIPE_SECRET_KEY.test(v), t('payment:validation.secretKey')),
    webhook_secret: z
      .string()
      .trim()
      .max(KEY_MAX, t('payment:validation.webhookSecretTooLong', { max: KEY_MAX }))
      .refine((v) => keepsStripe || v !== '', t('payment:validation.webhookSecretRequired'))
      .refine((v) => v === '' || STRIPE_WEBHOOK_SECRET.test(v), t('payment:validation.webhookSecret')),
  })

  return z
    .discriminatedUnion('type', [epay, stripe], { message: t('payment:validation.typeRequired') })
    .transform((v): GatewayPayload => {
      const fields = {
        name: v.name,
        icon: v.icon,
        enable: v.enable,
        fixed_fee: Number(v.fixed_fee),
        percent_fee: Number(v.percent_fee),
        currency: v.currency,
        notify_domain: v.notify_domain,
        sort: Number(v.sort),
      }
      if (v.type === 'stripe') {
        return { ...fields, type: 'stripe', config: { secret_key: v.secret_key, webhook_secret: v.webhook_secret } }
      }
      const key = v.key.trim() === '' ? '' : v.key
      return { ...fields, type: 'epay', config: { url: v.url, pid: v.pid, pay_type: v.pay_type, key } }
    })
}

/** A listed gateway as the body of PUT /api/payment, with its stored secrets kept (sent as ""). */
export function gatewayPayloadOf(g: Gateway): GatewayPayload & { id: number } {
  const fields = {
    id: g.id,
    name: g.name,
    icon: g.icon,
    enable: g.enable,
    fixed_fee: g.fixed_fee,
    percent_fee: g.percent_fee,
    currency: g.currency,
    notify_domain: g.notify_domain,
    sort: g.sort,
  }
  if (g.type === 'stripe') return { ...fields, type: 'stripe', config: { secret_key: '', webhook_secret: '' } }
  const { url = '', pid = '', pay_type = '' } = g.config
  return { ...fields, type: 'epay', config: { url, pid, pay_type, key: '' } }
}
