import { OAuthCallback } from '@/features/auth/components/oauth-callback'
import type { RedirectProvider } from '@/lib/oauth'

/** /oauth/github, /oauth/oidc, /oauth/lark: where the providers send the browser back (spec 2.1). */
export default function OAuthCallbackRoute({ provider }: { provider: RedirectProvider }) {
  // A new key per provider: each callback screen sends its own code once.
  return <OAuthCallback key={provider} provider={provider} />
}
