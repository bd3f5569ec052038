/** Dollars per ratio unit (1 = $0.002 per 1K tokens) and yuan per ratio unit (spec section 9). */
export const USD_PER_RATIO = 0.002
export const CNY_PER_RATIO = 0.014

export type PriceCurrency = 'usd' | 'cny'

/**
 * A ratio as money (spec section 9): 0 is free (null here, the caller prints "Free"); otherwise
 * ratio x 0.002 dollars (or x 0.014 yuan) per 1K tokens, times 1000 for per 1M, to 6 significant
 * digits. Per-call (`times`) prices use the same factor without the x1000.
 */
export function priceValue(ratio: number, currency: PriceCurrency, per1M = false): string | null {
  if (ratio === 0) return null
  const value = ratio * (currency === 'usd' ? USD_PER_RATIO : CNY_PER_RATIO) * (per1M ? 1000 : 1)
  const symbol = currency === 'usd' ? '$' : '¥'
  return `${symbol}${Number(value.toPrecision(6))}`
}
