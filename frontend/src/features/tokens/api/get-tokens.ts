import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page, Token } from '@/types/api'
import { tokenKeys, type TokenListParams } from './keys'

export function getTokens(params: TokenListParams, signal?: AbortSignal): Promise<Page<Token>> {
  return api.get<Page<Token>>('/api/token', {
    query: { page: params.page, size: params.size, keyword: params.keyword || undefined },
    signal,
  })
}

export function getTokensQueryOptions(params: TokenListParams) {
  return queryOptions({
    queryKey: tokenKeys.list(params),
    queryFn: ({ signal }) => getTokens(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/token: the user's keys (masked), paged, with a keyword (name or id). */
export function useTokens(params: TokenListParams) {
  return useQuery(getTokensQueryOptions(params))
}
