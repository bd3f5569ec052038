import type { TFunction } from 'i18next'
import { z } from 'zod'
import { parseQuotaText, quotaText, UNITS, type QuotaUnit } from '@/lib/format'
import type { Token } from '@/types/api'

export { parseQuotaText, quotaText, type QuotaUnit }

export const NAME_MAX = 64
export const HEARTBEAT_MIN = 30
export const HEARTBEAT_MAX = 90
/** The server's bound on a key's requests per minute (0: no limit of its own). */
export const API_RATE_MAX = 1_000_000

/** What the token form edits (inputs keep text; the schema turns it into the payload). */
export interface TokenFormValues {
  name: string
  remain_quota: string
  unlimited_quota: boolean
  never_expires: boolean
  /** `YYYY-MM-DDTHH:mm` in local time (datetime-local input). */
  expired_at: string
  models: string
  subnet: string
  /** Empty: the owner's group. */
  group: string
  /** Requests per minute for this key; 0 or empty: no limit of its own (the group's applies). */
  api_rate: string
  heartbeat_enabled: boolean
  heartbeat_timeout: string
  /** Answer identical non-streamed chat requests from the response cache (when the site has it on). */
  cache_enabled: boolean
}

/** Body of POST /api/token (and the editable fields of PUT /api/token). */
export interface TokenPayload {
  name: string
  remain_quota: number
  unlimited_quota: boolean
  /** -1 never, else unix seconds in the future. */
  expired_at: number
  models: string
  subnet: string
  group: string
  api_rate: number
  heartbeat_enabled: boolean
  heartbeat_timeout: number
  cache_enabled: boolean
}

const pad = (n: number) => String(n).padStart(2, '0')

/** Unix seconds -> value of a datetime-local input (local time, minutes). */
export function toDateTimeLocal(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** Value of a datetime-local input -> unix seconds (NaN when empty or invalid). */
export function fromDateTimeLocal(value: string): number {
  if (!value) return Number.NaN
  return Math.floor(new Date(value).getTime() / 1000)
}

/**
 * The form's starting values. A new key is usable at once: unlimited (what it may spend is
 * still bounded by the owner's balance); a limit is one switch away.
 */
export function tokenFormDefaults(token?: Token, unit: QuotaUnit = UNITS): TokenFormValues {
  if (!token) {
    return {
      name: '',
      remain_quota: '0',
      unlimited_quota: true,
      never_expires: true,
      expired_at: '',
      models: '',
      subnet: '',
      group: '',
      api_rate: '0',
      heartbeat_enabled: false,
      heartbeat_timeout: String(HEARTBEAT_MIN),
      cache_enabled: false,
    }
  }
  return {
    name: token.name,
    remain_quota: quotaText(token.remain_quota, unit),
    unlimited_quota: token.unlimited_quota,
    never_expires: token.expired_at === -1,
    expired_at: token.expired_at === -1 ? '' : toDateTimeLocal(token.expired_at),
    models: token.models,
    subnet: token.subnet,
    group: token.group,
    api_rate: String(token.api_rate ?? 0),
    heartbeat_enabled: token.heartbeat_enabled,
    heartbeat_timeout: String(token.heartbeat_timeout || HEARTBEAT_MIN),
    cache_enabled: token.cache_enabled,
  }
}

/**
 * Token form (spec sections 3 and 5): name required, at most 64 characters; quota a whole
 * number >= 0 unless unlimited; expiry never or a future time; heartbeat timeout 30-90 s.
 */
export function createTokenSchema(t: TFunction, now: () => number = Date.now, unit: QuotaUnit = UNITS) {
  return z
    .object({
      name: z
        .string()
        .trim()
        .min(1, t('tokens:validation.nameRequired'))
        .max(NAME_MAX, t('tokens:validation.nameTooLong', { max: NAME_MAX })),
      remain_quota: z.string().trim(),
      unlimited_quota: z.boolean(),
      never_expires: z.boolean(),
      expired_at: z.string(),
      models: z.string().trim(),
      subnet: z.string().trim(),
      group: z.string().trim(),
      api_rate: z.string().trim(),
      heartbeat_enabled: z.boolean(),
      heartbeat_timeout: z.string().trim(),
      cache_enabled: z.boolean(),
    })
    .superRefine((v, ctx) => {
      if (!v.unlimited_quota && Number.isNaN(parseQuotaText(v.remain_quota, unit))) {
        ctx.addIssue({
          code: 'custom',
          path: ['remain_quota'],
          message: unit.dollars ? t('tokens:validation.quotaDollars') : t('tokens:validation.quotaInteger'),
        })
      }
      if (!v.never_expires) {
        const at = fromDateTimeLocal(v.expired_at)
        if (Number.isNaN(at)) {
          ctx.addIssue({ code: 'custom', path: ['expired_at'], message: t('tokens:validation.expiryRequired') })
        } else if (at * 1000 <= now()) {
          ctx.addIssue({ code: 'custom', path: ['expired_at'], message: t('tokens:validation.expiryFuture') })
        }
      }
      const rate = Number(v.api_rate || '0')
      if (!/^\d*$/.test(v.api_rate) || rate > API_RATE_MAX) {
        ctx.addIssue({ code: 'custom', path: ['api_rate'], message: t('tokens:validation.apiRate', { max: API_RATE_MAX }) })
      }
      const hb = Number(v.heartbeat_timeout)
      if (!/^\d+$/.test(v.heartbeat_timeout) || hb < HEARTBEAT_MIN || hb > HEARTBEAT_MAX) {
        ctx.addIssue({
          code: 'custom',
          path: ['heartbeat_timeout'],
          message: t('tokens:validation.heartbeatRange', { min: HEARTBEAT_MIN, max: HEARTBEAT_MAX }),
        })
      }
    })
    .transform(
      (v): TokenPayload => ({
        name: v.name,
        remain_quota: v.unlimited_quota ? parseQuotaText(v.remain_quota, unit) || 0 : parseQuotaText(v.remain_quota, unit),
        unlimited_quota: v.unlimited_quota,
        expired_at: v.never_expires ? -1 : fromDateTimeLocal(v.expired_at),
        models: v.models,
        subnet: v.subnet,
        group: v.group,
        api_rate: Number(v.api_rate || '0'),
        heartbeat_enabled: v.heartbeat_enabled,
        heartbeat_timeout: Number(v.heartbeat_timeout),
        cache_enabled: v.cache_enabled,
      }),
    )
}
