const SYMBOLS: Record<string, string> = { CNY: '¥', USD: '$' }

/** A decimal amount in a currency as people read it: "¥69.35", "$10.00", else "12.00 EUR". */
export function formatMoney(value: string | number, currency: string): string {
  const n = typeof value === 'number' ? value : Number(value)
  const text = Number.isFinite(n) ? n.toFixed(2) : String(value)
  const symbol = SYMBOLS[currency]
  return symbol ? `${symbol}${text}` : `${text} ${currency}`
}

/** A fraction as a percentage without noise: 0.05 → "5%", 0.0125 → "1.25%". */
export function formatPercent(fraction: number): string {
  return `${Number((fraction * 100).toFixed(4))}%`
}

/** A discount factor as the share taken off: 0.9 → "10%"; undefined without a discount. */
export function discountOff(discount: number): string | undefined {
  if (!(discount > 0) || discount >= 1) return undefined
  return formatPercent(1 - discount)
}

/**
 * A payment gateway's fees as one line: a percent fee (a fraction) and a fixed fee in USD per
 * order, "5% + $0.30", "5%" or "$0.30"; undefined when it charges none.
 */
export function formatFees({ percent_fee, fixed_fee }: { percent_fee: number; fixed_fee: number }): string | undefined {
  const parts: string[] = []
  if (percent_fee > 0) parts.push(formatPercent(percent_fee))
  if (fixed_fee > 0) parts.push(formatMoney(fixed_fee, 'USD'))
  return parts.length > 0 ? parts.join(' + ') : undefined
}
