import type { Usage } from './types'

/**
 * The share of the requests answered from the response cache, 0-100; null without requests
 * (a rate of nothing is no rate, so the screen shows a dash rather than 0 %).
 */
export function cacheHitRate(usage: Pick<Usage, 'request_count' | 'cache_hits'>): number | null {
  if (!(usage.request_count > 0)) return null
  const hits = Math.max(0, usage.cache_hits ?? 0)
  return Math.min(100, (hits / usage.request_count) * 100)
}

/** The rate as the dashboard shows it: one decimal and a percent sign, or a dash. */
export function formatCacheHitRate(rate: number | null): string {
  return rate === null ? '—' : `${rate.toFixed(1)}%`
}
