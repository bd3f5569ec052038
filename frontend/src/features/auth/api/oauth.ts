import { useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { errorCodeOf, httpStatusOf } from '@/lib/errors'
import { completeOAuth, completeWechat, type OAuthResult, type RedirectProvider } from '@/lib/oauth'
import { setUser } from '@/stores/session'
import { authKeys } from './keys'
import { completeSignIn } from './login'

/**
 * Applies a third-party sign-in's answer (spec 4): a binding updates the signed-in user; a
 * sign-in starts the session like a password login (the Lark flow loads only the user).
 */
export function applyOAuthResult(queryClient: QueryClient, { user, bound }: OAuthResult, { loadGroups = true } = {}): void {
  if (bound) {
    setUser(user)
    queryClient.setQueryData(authKeys.self(), user)
  } else {
    completeSignIn(queryClient, user, { loadGroups })
  }
}

/** GET /api/oauth/wechat?code=&state=&aff=: the code the official account answered, with a state for this browser. */
export function useWechatSignIn() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: completeWechat,
    onSuccess: (result) => applyOAuthResult(queryClient, result),
  })
}

/** How often the callback asks again after a failure that a second try may cure. */
export const OAUTH_MAX_RETRIES = 3

/** Waits of the callback screen; a seam for tests. */
export const oauthTiming = {
  /** Before retry `n` (1-based): a little longer each time. */
  retryDelay: (n: number) => n * 1_000,
  /** How long "redirecting to login" stays readable before the redirect. */
  redirectDelay: 2_000,
}

/**
 * Only a failure the server did not answer is worth another try: a network error, or a 5xx
 * without the server's error code (a proxy in front of it). Every coded answer came after the
 * server took the single-use state (and the provider its single-use code), so a second try would
 * only be refused, hiding the real reason behind "link expired".
 */
export function isRetryableOAuthError(error: unknown): boolean {
  if (errorCodeOf(error)) return false
  const status = httpStatusOf(error)
  if (status !== undefined) return status >= 500
  // fetch rejects with a TypeError when the server cannot be reached; ApiError is a full answer.
  return error instanceof TypeError
}

/**
 * GET /api/oauth/{provider}?code=&state=&aff= from the callback screen, with up to three
 * retries (growing waits) for network and server errors; `failureCount` counts them.
 */
export function useOAuthCallback(provider: RedirectProvider) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (params: { code: string; state: string }) => completeOAuth(provider, params),
    // TanStack counts failures from 0 here: 0, 1, 2 retry, the fourth failure is final.
    retry: (failures, error) => failures < OAUTH_MAX_RETRIES && isRetryableOAuthError(error),
    retryDelay: (failures) => oauthTiming.retryDelay(failures + 1),
    onSuccess: (result) => applyOAuthResult(queryClient, result, { loadGroups: provider !== 'lark' }),
  })
}
