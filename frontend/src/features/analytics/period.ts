import type { TFunction } from 'i18next'
import { z } from 'zod'
import type { PeriodParams } from './types'

export const MAX_DAYS = 366
const DAY = 86_400

const pad = (n: number) => String(n).padStart(2, '0')

/** Unix seconds -> `YYYY-MM-DD` of its UTC day (a date input's value). */
export function toDateInput(seconds: number): string {
  const d = new Date(seconds * 1000)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
}

/** `YYYY-MM-DD` -> unix seconds of that UTC midnight (NaN when invalid). */
export function fromDateInput(value: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return Number.NaN
  return Date.parse(`${value}T00:00:00Z`) / 1000
}

/** The last `days` UTC days, today included. */
export function lastDays(days: number, now = Date.now()): { start: string; end: string } {
  const today = Math.floor(now / 1000 / DAY) * DAY
  return { start: toDateInput(today - (days - 1) * DAY), end: toDateInput(today) }
}

/** Period form: both dates required, end not before start, at most 366 days. */
export function createPeriodSchema(t: TFunction) {
  return z
    .object({ start: z.string(), end: z.string() })
    .superRefine((v, ctx) => {
      const s = fromDateInput(v.start)
      const e = fromDateInput(v.end)
      if (Number.isNaN(s)) ctx.addIssue({ code: 'custom', path: ['start'], message: t('analytics:validation.dateRequired') })
      if (Number.isNaN(e)) ctx.addIssue({ code: 'custom', path: ['end'], message: t('analytics:validation.dateRequired') })
      if (Number.isNaN(s) || Number.isNaN(e)) return
      if (e < s) ctx.addIssue({ code: 'custom', path: ['end'], message: t('analytics:validation.endBeforeStart') })
      else if ((e - s) / DAY + 1 > MAX_DAYS) {
        ctx.addIssue({ code: 'custom', path: ['end'], message: t('analytics:validation.tooLong', { max: MAX_DAYS }) })
      }
    })
    .transform((v): PeriodParams => ({ start_timestamp: fromDateInput(v.start), end_timestamp: fromDateInput(v.end) }))
}
export type PeriodFormValues = z.input<ReturnType<typeof createPeriodSchema>>
