import type { TFunction } from 'i18next'
import { z } from 'zod'
import type { UserGroup } from './types'

export const SYMBOL_MAX = 64
export const NAME_MAX = 64
export const API_RATE_MAX = 1_000_000

export interface GroupFormValues {
  symbol: string
  name: string
  ratio: string
  api_rate: string
  public: boolean
  promotion: boolean
  min_topup: string
  max_topup: string
  enabled: boolean
}

/** Body of POST /api/user_group (PUT takes the same without a changed symbol). */
export interface GroupPayload {
  symbol: string
  name: string
  ratio: number
  api_rate: number
  public: boolean
  promotion: boolean
  min_topup: number
  max_topup: number
  enabled: boolean
}

export function groupFormDefaults(g?: UserGroup): GroupFormValues {
  if (!g) {
    return {
      symbol: '',
      name: '',
      ratio: '1',
      api_rate: '0',
      public: false,
      promotion: false,
      min_topup: '0',
      max_topup: '0',
      enabled: true,
    }
  }
  return {
    symbol: g.symbol,
    name: g.name,
    ratio: String(g.ratio),
    api_rate: String(g.api_rate),
    public: g.public,
    promotion: g.promotion,
    min_topup: String(g.min_topup),
    max_topup: String(g.max_topup),
    enabled: g.enabled,
  }
}

const WHOLE = /^\d+$/
const DECIMAL = /^\d+(\.\d+)?$/

/**
 * User group form (spec section 5): symbol English letters (then letters, digits, `_`, `-`),
 * name required, ratio a number >= 0, API rate 0-1000000, top-up bounds whole numbers >= 0 and,
 * with promotion on, max 0 (no bound) or above min.
 */
export function createGroupSchema(t: TFunction) {
  return z
    .object({
      symbol: z
        .string()
        .trim()
        .min(1, t('groups:validation.symbolRequired'))
        .max(SYMBOL_MAX, t('groups:validation.symbolTooLong', { max: SYMBOL_MAX }))
        .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, t('groups:validation.symbolFormat')),
      name: z
        .string()
        .trim()
        .min(1, t('groups:validation.nameRequired'))
        .max(NAME_MAX, t('groups:validation.nameTooLong', { max: NAME_MAX })),
      ratio: z.string().trim().regex(DECIMAL, t('groups:validation.ratio')),
      api_rate: z.string().trim(),
      public: z.boolean(),
      promotion: z.boolean(),
      min_topup: z.string().trim().regex(WHOLE, t('groups:validation.topupInteger')),
      max_topup: z.string().trim().regex(WHOLE, t('groups:validation.topupInteger')),
      enabled: z.boolean(),
    })
    .superRefine((v, ctx) => {
      if (!WHOLE.test(v.api_rate) || Number(v.api_rate) > API_RATE_MAX) {
        ctx.addIssue({
          code: 'custom',
          path: ['api_rate'],
          message: t('groups:validation.apiRate', { max: API_RATE_MAX }),
        })
      }
      if (v.promotion && WHOLE.test(v.min_topup) && WHOLE.test(v.max_topup)) {
        const max = Number(v.max_topup)
        if (max !== 0 && max <= Number(v.min_topup)) {
          ctx.addIssue({ code: 'custom', path: ['max_topup'], message: t('groups:validation.maxAboveMin') })
        }
      }
    })
    .transform(
      (v): GroupPayload => ({
        symbol: v.symbol,
        name: v.name,
        ratio: Number(v.ratio),
        api_rate: Number(v.api_rate),
        public: v.public,
        promotion: v.promotion,
        min_topup: Number(v.min_topup),
        max_topup: Number(v.max_topup),
        enabled: v.enabled,
      }),
    )
}
