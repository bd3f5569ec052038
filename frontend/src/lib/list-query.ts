import { keepPreviousData, queryOptions, useQuery, type QueryKey } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'

type ListParams = { page: number; size: number }

/** A list's query string: the page and its size, then every filter that is set ('' and 0 are left out). */
export function listQuery({ page, size, ...filters }: ListParams): Record<string, string | number | boolean | undefined> {
  return { page, size, ...Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, (v as string | number | boolean) || undefined])) }
}

/** One page of a server-paged list (`GET path?page&size&…filters`), the last page kept on screen while the next loads. */
export function pageQueryOptions<T>(path: string, queryKey: QueryKey, params: ListParams) {
  return queryOptions({
    queryKey,
    queryFn: ({ signal }) => api.get<Page<T>>(path, { query: listQuery(params), signal }),
    placeholderData: keepPreviousData,
  })
}

export function usePage<T>(path: string, queryKey: QueryKey, params: ListParams) {
  return useQuery(pageQueryOptions<T>(path, queryKey, params))
}
