import { STORAGE_KEYS } from '@/config'
import type { User } from '@/types/api'
import { api, ApiError, requestEnvelope } from './api'
import { readString } from './storage'

/** Providers signed in with through their own authorize page and a callback screen (/oauth/…). */
export type RedirectProvider = 'github' | 'oidc' | 'lark'

/** Every third-party identity an account can be bound to (DELETE /api/user/binding/{provider}). */
export type BindingProvider = RedirectProvider | 'wechat' | 'telegram'

/** Where the browser goes; a seam for tests (jsdom can neither navigate nor open windows). */
export const browser = {
  assign: (url: string): void => window.location.assign(url),
  open: (url: string): Window | null => window.open(url, '_blank'),
}

/**
 * GET /api/oauth/endpoint?provider=: the provider's full authorize URL. The server keeps the
 * client id, redirect URI, state and PKCE, and ties the state to this browser with an HttpOnly
 * cookie (same-origin fetch with credentials).
 */
export function getOAuthEndpoint(provider: RedirectProvider): Promise<string> {
  return api.get<string>('/api/oauth/endpoint', { query: { provider } })
}

/**
 * Sends the browser to the provider's authorize page: in this window, except Lark, which opens
 * a new window (spec section 4) and falls back to this one when the popup is blocked.
 * Resolves `popup` when a window was opened, `redirected` when this page is leaving.
 */
export async function startOAuth(provider: RedirectProvider): Promise<'popup' | 'redirected'> {
  const url = await getOAuthEndpoint(provider)
  // The answer goes straight to the address bar: only a web address, never script.
  if (!/^https?:\/\//i.test(url)) throw new ApiError(`Unexpected authorize URL for ${provider}`, 'oauth_not_configured')
  if (provider === 'lark') {
    const popup = browser.open(url)
    if (popup) {
      // The provider's page gets no handle on the console.
      popup.opener = null
      return 'popup'
    }
  }
  browser.assign(url)
  return 'redirected'
}

/**
 * GET /api/oauth/state: a sign-in state for this browser (the server also sets it as an
 * HttpOnly cookie and takes it once). WeChat's code is sent with one, so a link on another site
 * carrying someone else's code cannot sign this browser in.
 */
export function getOAuthState(): Promise<string> {
  return api.get<string>('/api/oauth/state')
}

/** GET /api/oauth/wechat?code=&state=&aff=: the official account's code, with a fresh state. */
export async function completeWechat(code: string): Promise<OAuthResult> {
  const state = await getOAuthState()
  return completeOAuth('wechat', { code, state })
}

/** The invitation code kept from a `/register?aff=` link, sent with a third-party sign-up. */
export function readAffCode(): string | undefined {
  return readString(STORAGE_KEYS.aff)?.trim() || undefined
}

/** What a third-party sign-in answered: the user, and whether it bound the identity instead of signing in. */
export interface OAuthResult {
  user: User
  /** The browser was signed in: the identity was bound to that account (`message: "bind"`). */
  bound: boolean
}

/**
 * GET /api/oauth/{provider}?code=&state=&aff=: signs in (creating the account when none has
 * this identity and registration is open), or binds the identity when the browser is signed in.
 */
export async function completeOAuth(provider: BindingProvider, params: { code: string; state?: string }): Promise<OAuthResult> {
  const { data, message } = await requestEnvelope<User>(`/api/oauth/${provider}`, {
    query: { code: params.code, state: params.state, aff: readAffCode() },
  })
  return { user: data, bound: message === 'bind' }
}
