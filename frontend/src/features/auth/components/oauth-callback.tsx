import { TriangleAlertIcon } from 'lucide-react'
import { useEffect, useRef } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { Button } from '@/components/ui/button'
import { Spinner } from '@/components/ui/spinner'
import { errorText } from '@/lib/errors'
import type { RedirectProvider } from '@/lib/oauth'
import { notify } from '@/lib/toast'
import { OAUTH_MAX_RETRIES, oauthTiming, useOAuthCallback } from '../api/oauth'

/**
 * The provider's redirect back (/oauth/github, /oauth/oidc, /oauth/lark): hands `code` and
 * `state` to the server once (a state is single-use, so even React's doubled effects must not
 * send it twice). A binding goes to the profile, a sign-in to the console; a failure says why
 * and returns to /login. A provider that sent an error instead of a code fails at once.
 */
export function OAuthCallback({ provider }: { provider: RedirectProvider }) {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const [params] = useSearchParams()
  const code = params.get('code')?.trim() ?? ''
  const state = params.get('state')?.trim() ?? ''
  const providerError = params.get('error')?.trim() ?? ''
  const providerName = t(`auth:providers.${provider}`)

  // Failures known before asking the server.
  const refused = providerError
    ? t('auth:oauth.providerRefused', { provider: providerName, error: providerError })
    : !code
      ? t('errors:codes.oauth_code_required')
      : null

  const callback = useOAuthCallback(provider)
  const { mutate } = callback
  const sent = useRef(false)
  useEffect(() => {
    if (sent.current) return
    sent.current = true
    if (refused) {
      notify.error(t('errors:withMessage', { message: refused }))
      return
    }
    mutate(
      { code, state },
      {
        onSuccess: ({ bound }) => {
          // Spec section 4: a binding and a sign-in both toast and go on to /panel.
          notify.success(bound ? t('auth:oauth.bound', { provider: providerName }) : t('auth:login.success'))
          navigate('/panel', { replace: true })
        },
      },
    )
  }, [code, state, refused, mutate, navigate, providerName, t])

  const failure = refused ?? (callback.isError ? errorText(callback.error) : null)
  useEffect(() => {
    if (failure === null) return
    const timer = window.setTimeout(() => navigate('/login', { replace: true }), oauthTiming.redirectDelay)
    return () => window.clearTimeout(timer)
  }, [failure, navigate])

  return (
    <section
      className="mx-auto flex max-w-md flex-1 flex-col items-center justify-center gap-4 px-4 py-16 text-center"
      data-testid="oauth-callback"
      aria-live="polite"
    >
      {failure !== null ? (
        <>
          <TriangleAlertIcon aria-hidden className="size-10 text-destructive" />
          <h1 className="text-xl font-semibold" data-testid="oauth-failed">
            {t('auth:oauth.failed')}
          </h1>
          <p className="text-sm break-words text-muted-foreground" role="alert" data-testid="oauth-reason">
            {failure}
          </p>
          <Button asChild variant="outline">
            <Link to="/login" replace>
              {t('auth:oauth.toLogin')}
            </Link>
          </Button>
        </>
      ) : (
        <>
          <Spinner className="size-8" />
          <h1 className="text-xl font-semibold">{t('auth:oauth.working', { provider: providerName })}</h1>
          {callback.failureCount > 0 && (
            <p className="text-sm text-muted-foreground" data-testid="oauth-retry">
              {t('auth:oauth.retrying', { n: callback.failureCount, max: OAUTH_MAX_RETRIES })}
            </p>
          )}
        </>
      )}
    </section>
  )
}
