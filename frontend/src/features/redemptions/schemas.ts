import type { TFunction } from 'i18next'
import { z } from 'zod'
import { parseQuotaText, quotaText, UNITS, type QuotaUnit } from '@/lib/format'
import type { Redemption } from './types'

export const NAME_MAX = 64
export const COUNT_MAX = 100

export interface RedemptionFormValues {
  name: string
  quota: string
  count: string
}

/** Body of POST /api/redemption. */
export interface RedemptionCreatePayload {
  name: string
  quota: number
  count: number
}

export function redemptionFormDefaults(r?: Redemption, unit: QuotaUnit = UNITS): RedemptionFormValues {
  return r ? { name: r.name, quota: quotaText(r.quota, unit), count: '1' } : { name: '', quota: '0', count: '1' }
}

/**
 * Redemption form (spec section 5): name required (at most 64 characters), quota >= 0 (in
 * dollars with up to 6 decimals when the site shows money, else whole units), count 1-100 (only
 * when creating).
 */
export function createRedemptionSchema(t: TFunction, unit: QuotaUnit = UNITS) {
  return z
    .object({
      name: z
        .string()
        .trim()
        .min(1, t('redemptions:validation.nameRequired'))
        .max(NAME_MAX, t('redemptions:validation.nameTooLong', { max: NAME_MAX })),
      quota: z
        .string()
        .trim()
        .refine((v) => !Number.isNaN(parseQuotaText(v, unit)), {
          message: unit.dollars ? t('redemptions:validation.quotaDollars') : t('redemptions:validation.quotaInteger'),
        }),
      count: z.string().trim(),
    })
    .superRefine((v, ctx) => {
      const n = Number(v.count)
      if (!/^\d+$/.test(v.count) || n < 1 || n > COUNT_MAX) {
        ctx.addIssue({
          code: 'custom',
          path: ['count'],
          message: t('redemptions:validation.countRange', { max: COUNT_MAX }),
        })
      }
    })
    .transform(
      (v): RedemptionCreatePayload => ({ name: v.name, quota: parseQuotaText(v.quota, unit), count: Number(v.count) }),
    )
}
