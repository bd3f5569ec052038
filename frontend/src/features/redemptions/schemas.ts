import type { TFunction } from 'i18next'
import { z } from 'zod'
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

export function redemptionFormDefaults(r?: Redemption): RedemptionFormValues {
  return r ? { name: r.name, quota: String(r.quota), count: '1' } : { name: '', quota: '0', count: '1' }
}

/**
 * Redemption form (spec section 5): name required (at most 64 characters), quota a whole number
 * >= 0, count 1-100 (only when creating).
 */
export function createRedemptionSchema(t: TFunction) {
  return z
    .object({
      name: z
        .string()
        .trim()
        .min(1, t('redemptions:validation.nameRequired'))
        .max(NAME_MAX, t('redemptions:validation.nameTooLong', { max: NAME_MAX })),
      quota: z.string().trim().regex(/^\d+$/, t('redemptions:validation.quotaInteger')),
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
    .transform((v): RedemptionCreatePayload => ({ name: v.name, quota: Number(v.quota), count: Number(v.count) }))
}
