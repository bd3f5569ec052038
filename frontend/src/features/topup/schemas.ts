import type { TFunction } from 'i18next'
import { z } from 'zod'

export interface TopupFormValues {
  key: string
}

/** The redemption code: required (the server checks the rest, without saying why a code is refused). */
export function createTopupSchema(t: TFunction) {
  return z.object({
    key: z.string().trim().min(1, t('topup:validation.keyRequired')),
  })
}

/** The largest online top-up the server accepts, in USD. */
export const AMOUNT_MAX = 1_000_000

export interface OnlineTopupValues {
  /** USD, typed as text. */
  amount: string
  /** The chosen gateway. */
  uuid: string
}

/** The site's minimum top-up (`payment_min_amount` in the status when the server sends it), else 1. */
export function minAmountOf(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= AMOUNT_MAX ? value : 1
}

/**
 * What is wrong with a typed top-up amount, as the server checks it: a positive whole number of
 * USD, at least the site's minimum and at most 1 000 000. Undefined when it is fine.
 */
export function amountIssue(text: string, min: number, t: TFunction): string | undefined {
  const v = text.trim()
  if (v === '') return t('topup:validation.amountRequired')
  if (!/^\d+$/.test(v) || Number(v) < 1) return t('topup:validation.amountInteger')
  const n = Number(v)
  if (n < min) return t('topup:validation.amountMin', { min })
  if (n > AMOUNT_MAX) return t('topup:validation.amountMax', { max: AMOUNT_MAX })
  return undefined
}

/** The online top-up form: an amount (see `amountIssue`) and a gateway. */
export function createOnlineTopupSchema(t: TFunction, min: number) {
  return z
    .object({
      amount: z.string(),
      uuid: z.string().min(1, t('topup:validation.gatewayRequired')),
    })
    .superRefine((v, ctx) => {
      const message = amountIssue(v.amount, min, t)
      if (message) ctx.addIssue({ code: 'custom', path: ['amount'], message })
    })
    .transform((v) => ({ amount: Number(v.amount.trim()), uuid: v.uuid }))
}
