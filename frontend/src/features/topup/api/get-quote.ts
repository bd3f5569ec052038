import { useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Quote } from '../types'
import { topupKeys } from './keys'

export function getQuote(uuid: string, amount: number, signal?: AbortSignal): Promise<Quote> {
  return api.get<Quote>('/api/user/order/quote', { query: { uuid, amount }, signal })
}

/**
 * GET /api/user/order/quote?uuid=&amount=: the discount, fee and total before paying. A refusal
 * (amount out of range, gateway gone) is shown in place, not toasted.
 */
export function useQuote(uuid: string, amount: number, enabled: boolean) {
  return useQuery({
    queryKey: topupKeys.quote(uuid, amount),
    queryFn: ({ signal }) => getQuote(uuid, amount, signal),
    enabled,
    meta: { silent: true },
  })
}
