import type { TFunction } from 'i18next'
import { z } from 'zod'
import {
  CURRENCIES,
  EPAY_PAY_TYPES,
  GATEWAY_TYPES,
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
  url: string
  pid: string
  pay_type: EpayPayType
  /** Create: required. Edit: blank keeps the stored key. */
  key: string
}

export function gatewayFormDefaults(g?: Gateway): GatewayFormValues {
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
      key: '',
    }
  }
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
    // A configuration sealed under another server secret is listed as `{}`.
    url: g.config.url ?? '',
    pid: g.config.pid ?? '',
    pay_type: g.config.pay_type ?? '',
    key: '',
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
 * >= 0, the callback address empty or an http(s) origin, the epay site an http(s) address, the
 * merchant id required (at most 64), the merchant key (at most 256) required when creating
 * (blank when editing keeps the stored one).
 */
export function createGatewaySchema(t: TFunction, { editing }: { editing: boolean }) {
  return z
    .object({
      name: z
        .string()
        .trim()
        .min(1, t('payment:validation.nameRequired'))
        .max(NAME_MAX, t('payment:validation.nameTooLong', { max: NAME_MAX })),
      type: z.enum(GATEWAY_TYPES, { message: t('payment:validation.typeRequired') }),
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
      key: z.string().max(KEY_MAX, t('payment:validation.keyTooLong', { max: KEY_MAX })),
    })
    .superRefine((v, ctx) => {
      if (!editing && v.key.trim() === '') {
        ctx.addIssue({ code: 'custom', path: ['key'], message: t('payment:validation.keyRequired') })
      }
    })
    .transform(
      (v): GatewayPayload => ({
        name: v.name,
        type: v.type,
        icon: v.icon,
        enable: v.enable,
        fixed_fee: Number(v.fixed_fee),
        percent_fee: Number(v.percent_fee),
        currency: v.currency,
        notify_domain: v.notify_domain,
        sort: Number(v.sort),
        config: { url: v.url, pid: v.pid, pay_type: v.pay_type, key: v.key.trim() === '' ? '' : v.key },
      }),
    )
}

/** A listed gateway as the body of PUT /api/payment, with the stored key kept (`key: ""`). */
export function gatewayPayloadOf(g: Gateway): GatewayPayload & { id: number } {
  return {
    id: g.id,
    name: g.name,
    type: g.type,
    icon: g.icon,
    enable: g.enable,
    fixed_fee: g.fixed_fee,
    percent_fee: g.percent_fee,
    currency: g.currency,
    notify_domain: g.notify_domain,
    sort: g.sort,
    config: { url: g.config.url ?? '', pid: g.config.pid ?? '', pay_type: g.config.pay_type ?? '', key: '' },
  }
}
