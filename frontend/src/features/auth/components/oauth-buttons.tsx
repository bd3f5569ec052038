import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { ProviderIcon } from '@/components/provider-icon'
import { Button } from '@/components/ui/button'
import { Spinner } from '@/components/ui/spinner'
import { WechatCodeDialog } from '@/components/wechat-code-dialog'
import { useOAuthStart } from '@/hooks/use-oauth-start'
import type { OAuthResult, RedirectProvider } from '@/lib/oauth'
import { notify } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
import { useWechatSignIn } from '../api/oauth'

export interface OAuthButtonsProps {
  /** A WeChat code signed in (or bound, when the browser was signed in already). */
  onSuccess: (result: OAuthResult) => void
}

/**
 * The third-party sign-ins the site has switched on (spec 2.1): GitHub, OpenID Connect and Lark
 * leave for the provider's page (Lark in a new window); WeChat asks for the code its official
 * account answers. Nothing is rendered when none is on.
 */
export function OAuthButtons({ onSuccess }: OAuthButtonsProps) {
  const { t } = useTranslation()
  const { github_oauth, oidc_auth, lark_login, wechat_login, wechat_qrcode } = useSiteInfo()
  const { start, working } = useOAuthStart()
  const wechat = useWechatSignIn()
  const [wechatOpen, setWechatOpen] = useState(false)

  const redirects = (
    [
      ['github', github_oauth],
      ['oidc', oidc_auth],
      ['lark', lark_login],
    ] as const
  )
    .filter(([, on]) => on)
    .map(([provider]) => provider as RedirectProvider)
  if (redirects.length === 0 && !wechat_login) return null

  const busy = working !== null || wechat.isPending
  const submitCode = (code: string) =>
    wechat.mutate(code, {
      onSuccess: (result) => {
        setWechatOpen(false)
        notify.success(result.bound ? t('auth:oauth.bound', { provider: t('auth:providers.wechat') }) : t('auth:login.success'))
        onSuccess(result)
      },
    })

  return (
    <div className="mt-6 grid gap-3" data-testid="oauth-buttons">
      <div className="flex items-center gap-3 text-xs text-muted-foreground">
        <span aria-hidden className="h-px flex-1 bg-border" />
        {t('auth:oauth.or')}
        <span aria-hidden className="h-px flex-1 bg-border" />
      </div>
      <div className="grid gap-2">
        {redirects.map((provider) => (
          <Button
            key={provider}
            type="button"
            variant="outline"
            className="w-full"
            disabled={busy}
            aria-busy={working === provider}
            onClick={() => start(provider)}
            data-testid={`oauth-${provider}`}
          >
            {working === provider ? <Spinner /> : <ProviderIcon method={provider} />}
            {t('auth:oauth.signInWith', { provider: t(`auth:providers.${provider}`) })}
          </Button>
        ))}
        {wechat_login && (
          <Button
            type="button"
            variant="outline"
            className="w-full"
            disabled={busy}
            onClick={() => setWechatOpen(true)}
            data-testid="oauth-wechat"
          >
            {wechat.isPending ? <Spinner /> : <ProviderIcon method="wechat" />}
            {t('auth:oauth.signInWith', { provider: t('auth:providers.wechat') })}
          </Button>
        )}
      </div>
      <WechatCodeDialog
        open={wechatOpen}
        onOpenChange={setWechatOpen}
        qrcode={wechat_qrcode}
        onSubmit={submitCode}
        pending={wechat.isPending}
        submitLabel={t('auth:login.submit')}
      />
    </div>
  )
}
