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
