import type { TFunction } from 'i18next'
import { z } from 'zod'
import {
  ALIPAY_MODES,
  CURRENCIES,
  EPAY_PAY_TYPES,
  chargesInCnyOnly,
  type AlipayMode,
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
/** An Alipay APPID: digits, at most 32. */
export const ALIPAY_APP_ID_MAX = 32
/** A WeChat Pay merchant id (商户号): digits, at most 32. */
export const MCH_ID_MAX = 32
/** A WeChat Pay AppID (e.g. wx…). */
export const WXPAY_APP_ID_MAX = 64
/** The merchant API certificate's serial number (hex) and the WeChat Pay public key ID. */
export const SERIAL_NO_MAX = 64
export const PLATFORM_KEY_ID_MAX = 128
/** An RSA key as PEM or bare base64 (a 4096-bit PKCS#1 private key is about 3 300 characters). */
export const PEM_MAX = 8192
/** WeChat Pay's API v3 key: exactly 32 characters. */
export const API_V3_KEY_LENGTH = 32

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
  /** Alipay. */
  alipay_app_id: string
  alipay_mode: AlipayMode
  alipay_public_key: string
  /** Alipay. Create: required. Edit: blank keeps the stored key. */
  alipay_private_key: string
  /** WeChat Pay. */
  wxpay_mch_id: string
  wxpay_app_id: string
  wxpay_serial_no: string
  wxpay_platform_key_id: string
  wxpay_platform_public_key: string
  /** WeChat Pay. Create: required. Edit: blank keeps the stored one. */
  wxpay_private_key: string
  wxpay_api_v3_key: string
}

export function gatewayFormDefaults(g?: Gateway): GatewayFormValues {
  const secrets = {
    key: '',
    secret_key: '',
    webhook_secret: '',
    alipay_private_key: '',
    wxpay_private_key: '',
    wxpay_api_v3_key: '',
  }
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
      alipay_app_id: '',
      alipay_mode: 'page',
      alipay_public_key: '',
      wxpay_mch_id: '',
      wxpay_app_id: '',
      wxpay_serial_no: '',
      wxpay_platform_key_id: '',
      wxpay_platform_public_key: '',
      ...secrets,
    }
  }
  // A configuration sealed under another server secret is listed as `{}`; Stripe's is always `{}`.
  const epay = g.type === 'epay' ? g.config : {}
  const alipay = g.type === 'alipay' ? g.config : {}
  const wxpay = g.type === 'wxpay' ? g.config : {}
  return {
    name: g.name,
    type: g.type,
    icon: g.icon,
    enable: g.enable,
    fixed_fee: String(g.fixed_fee),
    percent_fee: String(g.percent_fee),
    // Alipay and WeChat Pay charge in yuan only.
    currency: chargesInCnyOnly(g.type) ? 'CNY' : g.currency,
    notify_domain: g.notify_domain,
    sort: String(g.sort),
    url: epay.url ?? '',
    pid: epay.pid ?? '',
    pay_type: epay.pay_type ?? '',
    alipay_app_id: alipay.app_id ?? '',
    alipay_mode: alipay.mode ?? 'page',
    alipay_public_key: alipay.alipay_public_key ?? '',
    wxpay_mch_id: wxpay.mch_id ?? '',
    wxpay_app_id: wxpay.app_id ?? '',
    wxpay_serial_no: wxpay.serial_no ?? '',
    wxpay_platform_key_id: wxpay.platform_key_id ?? '',
    wxpay_platform_public_key: wxpay.platform_public_key ?? '',
    ...secrets,
  }
}

const DECIMAL = /^\d+(\.\d+)?$/
const WHOLE = /^\d+$/
const HEX = /^[0-9a-f]+$/i
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * An RSA key as the server reads it: PEM (its `-----BEGIN …-----` armour lines ignored) or the
 * bare base64 that Alipay's and WeChat Pay's consoles show, whitespace ignored.
 */
export function isKeyText(value: string): boolean {
  const body = value
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('-----'))
    .join('')
    .replace(/\s/g, '')
  return body !== '' && BASE64.test(body)
}

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
 *   (each at most 256, trimmed like the server does);
 * - alipay: the APPID digits (at most 32), the mode `page` or `qrcode`, Alipay's public key and
 *   the application's private key PEM or bare base64 (at most 8192);
 * - wxpay: the merchant id digits (at most 32), the AppID (at most 64), the merchant certificate
 *   serial number hex (at most 64), the WeChat Pay public key ID (at most 64), the WeChat Pay
 *   public key and the merchant private key PEM or base64, the API v3 key exactly 32 characters.
 * Alipay and WeChat Pay charge in CNY only. Keys are trimmed.
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
    alipay_app_id: z.string(),
    alipay_mode: z.enum(ALIPAY_MODES),
    alipay_public_key: z.string(),
    alipay_private_key: z.string(),
    wxpay_mch_id: z.string(),
    wxpay_app_id: z.string(),
    wxpay_serial_no: z.string(),
    wxpay_platform_key_id: z.string(),
    wxpay_platform_public_key: z.string(),
    wxpay_private_key: z.string(),
    wxpay_api_v3_key: z.string(),
  }
  const keepsEpay = storedType === 'epay'
  const keepsStripe = storedType === 'stripe'
  const keepsAlipay = storedType === 'alipay'
  const keepsWxpay = storedType === 'wxpay'
  const cny = z
    .enum(CURRENCIES, { message: t('payment:validation.currencyRequired') })
    .refine((v) => v === 'CNY', t('payment:validation.currencyCny'))
  /** A required RSA key (PEM or base64), trimmed. */
  const keyText = (required: string, invalid: string, tooLong: string) =>
    z
      .string()
      .trim()
      .min(1, required)
      .max(PEM_MAX, tooLong)
      .refine(isKeyText, invalid)
  /** A write-only RSA private key: required unless the stored one is kept (blank, sent as ""). */
  const privateKeyText = (keeps: boolean, required: string, invalid: string, tooLong: string) =>
    z
      .string()
      .trim()
      .max(PEM_MAX, tooLong)
      .refine((v) => keeps || v !== '', required)
      .refine((v) => v === '' || isKeyText(v), invalid)

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

  const alipay = z.object({
    ...common,
    ...unchecked,
    type: z.literal('alipay'),
    currency: cny,
    alipay_app_id: z
      .string()
      .trim()
      .min(1, t('payment:validation.alipayAppIdRequired'))
      .max(ALIPAY_APP_ID_MAX, t('payment:validation.alipayAppIdTooLong', { max: ALIPAY_APP_ID_MAX }))
      .regex(WHOLE, t('payment:validation.alipayAppId')),
    alipay_mode: z.enum(ALIPAY_MODES),
    alipay_public_key: keyText(
      t('payment:validation.alipayPublicKeyRequired'),
      t('payment:validation.keyText'),
      t('payment:validation.keyTextTooLong', { max: PEM_MAX }),
    ),
    alipay_private_key: privateKeyText(
      keepsAlipay,
      t('payment:validation.privateKeyRequired'),
      t('payment:validation.keyText'),
      t('payment:validation.keyTextTooLong', { max: PEM_MAX }),
    ),
  })

  const wxpay = z.object({
    ...common,
    ...unchecked,
    type: z.literal('wxpay'),
    currency: cny,
    // WeChat Pay notifies https addresses only (blank: the server checks the server address).
    notify_domain: common.notify_domain.refine((v) => v === '' || v.toLowerCase().startsWith('https://'), t('payment:validation.notifyDomainHttps')),
    wxpay_mch_id: z
      .string()
      .trim()
      .min(1, t('payment:validation.mchIdRequired'))
      .max(MCH_ID_MAX, t('payment:validation.mchIdTooLong', { max: MCH_ID_MAX }))
      .regex(WHOLE, t('payment:validation.mchId')),
    wxpay_app_id: z
      .string()
      .trim()
      .min(1, t('payment:validation.wxpayAppIdRequired'))
      .max(WXPAY_APP_ID_MAX, t('payment:validation.wxpayAppIdTooLong', { max: WXPAY_APP_ID_MAX })),
    wxpay_serial_no: z
      .string()
      .trim()
      .min(1, t('payment:validation.serialNoRequired'))
      .max(SERIAL_NO_MAX, t('payment:validation.serialNoTooLong', { max: SERIAL_NO_MAX }))
      .regex(HEX, t('payment:validation.serialNo')),
    wxpay_platform_key_id: z
      .string()
      .trim()
      .min(1, t('payment:validation.platformKeyIdRequired'))
      .max(PLATFORM_KEY_ID_MAX, t('payment:validation.platformKeyIdTooLong', { max: PLATFORM_KEY_ID_MAX })),
    wxpay_platform_public_key: keyText(
      t('payment:validation.platformPublicKeyRequired'),
      t('payment:validation.keyText'),
      t('payment:validation.keyTextTooLong', { max: PEM_MAX }),
    ),
    wxpay_private_key: privateKeyText(
      keepsWxpay,
      t('payment:validation.wxpayPrivateKeyRequired'),
      t('payment:validation.keyText'),
      t('payment:validation.keyTextTooLong', { max: PEM_MAX }),
    ),
    // An API v3 key never contains spaces: a pasted one is trimmed; blank is sent as "".
    wxpay_api_v3_key: z
      .string()
      .trim()
      .refine((v) => keepsWxpay || v !== '', t('payment:validation.apiV3KeyRequired'))
      .refine((v) => v === '' || v.length === API_V3_KEY_LENGTH, t('payment:validation.apiV3Key', { length: API_V3_KEY_LENGTH })),
  })

  return z
    .discriminatedUnion('type', [epay, stripe, alipay, wxpay], { message: t('payment:validation.typeRequired') })
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
      if (v.type === 'alipay') {
        return {
          ...fields,
          type: 'alipay',
          config: {
            app_id: v.alipay_app_id,
            mode: v.alipay_mode,
            alipay_public_key: v.alipay_public_key,
            private_key: v.alipay_private_key,
          },
        }
      }
      if (v.type === 'wxpay') {
        return {
          ...fields,
          type: 'wxpay',
          config: {
            mch_id: v.wxpay_mch_id,
            app_id: v.wxpay_app_id,
            serial_no: v.wxpay_serial_no,
            platform_key_id: v.wxpay_platform_key_id,
            platform_public_key: v.wxpay_platform_public_key,
            private_key: v.wxpay_private_key,
            api_v3_key: v.wxpay_api_v3_key,
          },
        }
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
  if (g.type === 'alipay') {
    const { app_id = '', mode = 'page', alipay_public_key = '' } = g.config
    return { ...fields, type: 'alipay', config: { app_id, mode, alipay_public_key, private_key: '' } }
  }
  if (g.type === 'wxpay') {
    const { mch_id = '', app_id = '', serial_no = '', platform_key_id = '', platform_public_key = '' } = g.config
    return {
      ...fields,
      type: 'wxpay',
      config: { mch_id, app_id, serial_no, platform_key_id, platform_public_key, private_key: '', api_v3_key: '' },
    }
  }
  const { url = '', pid = '', pay_type = '' } = g.config
  return { ...fields, type: 'epay', config: { url, pid, pay_type, key: '' } }
}
