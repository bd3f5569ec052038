import { DEFAULT_QUOTA_PER_UNIT } from '@/config'

export interface QuotaDisplay {
  /** Show quota as dollars (site flag display_in_currency). */
  displayInCurrency: boolean
  /** Quota units per dollar (site quota_per_unit, default 500000). */
  quotaPerUnit?: number
}

/**
 * Abbreviate a raw figure (spec section 9): 1e9 and more as B, 1e6 as M, 1e4 as k, one
 * decimal; smaller numbers as they are.
 */
export function renderNumber(num: number): string {
  const abs = Math.abs(num)
  if (abs >= 1e9) return `${(num / 1e9).toFixed(1)}B`
  if (abs >= 1e6) return `${(num / 1e6).toFixed(1)}M`
  if (abs >= 1e4) return `${(num / 1e3).toFixed(1)}k`
  return String(num)
}

/**
 * A dollar amount with enough precision to see (issue #13): at least 2 decimals, and as many
 * more as it takes to show `significant` significant digits of a small amount, trailing zeros
 * beyond the second decimal dropped. $12.5 is "12.50", $0.0001 is "0.0001", $0.000123456 is
 * "0.000123456", $1234.56789 is "1234.57". Never "0.00" for an amount that is not zero
 * (below 1e-12 it shows in exponent form).
 */
export function formatAmount(value: number, significant = 6): string {
  if (!Number.isFinite(value)) return String(value)
  if (value === 0) return '0.00'
  const abs = Math.abs(value)
  if (abs < 1e-12) return value.toExponential(significant - 1).replace(/\.?0+e/, 'e')
  const magnitude = Math.floor(Math.log10(abs))
  const decimals = Math.min(20, Math.max(2, significant - 1 - magnitude))
  const fixed = value.toFixed(decimals)
  // Keep two decimals; drop trailing zeros after them.
  return fixed.replace(/(\.\d\d\d*?)0+$/, '$1')
}

/**
 * Quota as shown to users (spec section 9): "$" + quota / quota_per_unit, or the abbreviated
 * figure. Dollars keep 2 decimals and show small amounts to `significant` significant digits
 * (see [`formatAmount`]), so a call costing $0.0001 never reads "$0.00".
 */
export function renderQuota(quota: number, { displayInCurrency, quotaPerUnit }: QuotaDisplay, significant = 6): string {
  if (displayInCurrency) {
    const perUnit = quotaPerUnit && quotaPerUnit > 0 ? quotaPerUnit : DEFAULT_QUOTA_PER_UNIT
    return `$${formatAmount(quota / perUnit, significant)}`
  }
  return renderNumber(quota)
}

/** Quota units as dollars (for inputs that take dollars): quota / quota_per_unit. */
export function quotaToDollars(quota: number, quotaPerUnit?: number): number {
  const perUnit = quotaPerUnit && quotaPerUnit > 0 ? quotaPerUnit : DEFAULT_QUOTA_PER_UNIT
  return quota / perUnit
}

/** Dollars typed by a person as whole quota units (rounded to the nearest unit). */
export function dollarsToQuota(dollars: number, quotaPerUnit?: number): number {
  const perUnit = quotaPerUnit && quotaPerUnit > 0 ? quotaPerUnit : DEFAULT_QUOTA_PER_UNIT
  return Math.round(dollars * perUnit)
}

/**
 * How the quota field is typed: in dollars when the site shows money (display_in_currency),
 * converted with quota_per_unit; else in raw quota units.
 */
export interface QuotaUnit {
  dollars: boolean
  perUnit: number
}

export const UNITS: QuotaUnit = { dollars: false, perUnit: DEFAULT_QUOTA_PER_UNIT }

/** A quota in units as the field shows it. */
export function quotaText(quota: number, unit: QuotaUnit): string {
  return unit.dollars ? String(Number(quotaToDollars(quota, unit.perUnit).toPrecision(12))) : String(quota)
}

/** The field's text as quota units; NaN when it is not a valid amount (at most 6 decimals of a dollar). */
export function parseQuotaText(text: string, unit: QuotaUnit): number {
  const v = text.trim()
  if (unit.dollars) return /^\d+(\.\d{1,6})?$/.test(v) ? dollarsToQuota(Number(v), unit.perUnit) : Number.NaN
  return /^\d+$/.test(v) ? Number(v) : Number.NaN
}

/** Milliseconds as people read a duration: "850 ms" under a second, else "1.25 s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '-'
  if (Math.abs(ms) < 1000) return `${Math.round(ms)} ms`
  return `${formatAmount(ms / 1000, 3)} s`
}

const pad = (n: number) => String(n).padStart(2, '0')

/** Unix seconds as local "YYYY-MM-DD HH:mm:ss" (spec section 9). */
export function formatTimestamp(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000)
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  )
}

/** A UTC day (unix seconds of its midnight) as "MM-DD" (the rollup's days are UTC days). */
export function formatDay(daySeconds: number): string {
  const d = new Date(daySeconds * 1000)
  return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
}

/** Used share of a quota, 0-100 (spec section 9: used / (remaining + used)). */
export function usagePercent(used: number, remaining: number): number {
  const total = used + remaining
  if (!(total > 0)) return 0
  return Math.min(100, Math.max(0, (used / total) * 100))
}

/** Usage bar colour (spec section 4): green under 60 percent, orange under 85, red otherwise. */
export function usageLevel(percent: number): 'green' | 'orange' | 'red' {
  if (percent < 60) return 'green'
  if (percent < 85) return 'orange'
  return 'red'
}

/** Bytes as B, KiB, MiB, GiB or TiB with one decimal. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = bytes
  let i = 0
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`
}

/** Unix seconds as the value of a datetime-local input (local time); '' for 0. */
export function toLocalInput(unix: number): string {
  if (!unix) return ''
  const d = new Date(unix * 1000)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** A datetime-local value as unix seconds; 0 for empty or invalid. */
export function fromLocalInput(v: string): number {
  if (!v) return 0
  const ms = new Date(v).getTime()
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0
}
