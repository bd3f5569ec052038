import { usePage } from '@/lib/list-query'
import type { Token } from '@/types/api'
import { tokenKeys, type TokenListParams } from './keys'

/** GET /api/token: the user's keys (masked), paged, with a keyword (name or id). */
export function useTokens(params: TokenListParams) {
  return usePage<Token>('/api/token', tokenKeys.list(params), params)
}
