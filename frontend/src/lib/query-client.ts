import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query'
import { handleApiError, httpStatusOf } from './errors'

/** Per-query / per-mutation switches (central error handler, cache scope). */
export interface AppMeta extends Record<string, unknown> {
  /** Not tied to a user (e.g. site status): survives a change of session. */
  public?: boolean
  /** The caller reports this error itself (e.g. the start-up status call). */
  silent?: boolean
  /** Do not toast a 401 (a session probe: the route guard redirects instead). */
  silentUnauthorized?: boolean
}

declare module '@tanstack/react-query' {
  interface Register {
    queryMeta: AppMeta
    mutationMeta: AppMeta
  }
}

function report(error: unknown, meta: AppMeta | undefined): void {
  if (meta?.silent) return
  if (meta?.silentUnauthorized && httpStatusOf(error) === 401) return
  handleApiError(error)
}

/** Retry network errors and 5xx once; never retry 4xx or `success: false`. */
function shouldRetry(failureCount: number, error: unknown): boolean {
  const status = httpStatusOf(error)
  if (status !== undefined && status < 500) return false
  if (error instanceof Error && error.name === 'ApiError') return false
  return failureCount < 1
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({
      onError: (error, query) => report(error, query.meta),
    }),
    mutationCache: new MutationCache({
      onError: (error, _variables, _context, mutation) => report(error, mutation.meta),
    }),
    defaultOptions: {
      queries: {
        retry: shouldRetry,
        staleTime: 30_000,
        refetchOnWindowFocus: false,
      },
      mutations: { retry: false },
    },
  })
}

/** A new session must not see data cached for the previous one. */
export function removeUserQueries(client: QueryClient): void {
  client.removeQueries({ predicate: (query) => !query.meta?.public })
}

export const queryClient = createQueryClient()
