import type { TFunction } from 'i18next'
import { z } from 'zod'

const pad = (n: number) => String(n).padStart(2, '0')

/** The month before `now` as YYYY-MM (the latest month that can be billed). */
export function previousMonth(now = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1))
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`
}

/** Invoice generation: a YYYY-MM month that has ended (UTC). */
export function createGenerateSchema(t: TFunction, now: () => Date = () => new Date()) {
  return z.object({
    month: z
      .string()
      .trim()
      .regex(/^\d{4}-(0[1-9]|1[0-2])$/, t('invoices:generate.monthFormat'))
      .refine((m) => m <= previousMonth(now()), t('invoices:generate.monthNotEnded')),
    regenerate: z.boolean(),
  })
}
export type GenerateValues = z.input<ReturnType<typeof createGenerateSchema>>
