import { Link2Icon, Link2OffIcon, PencilIcon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { ConfirmDialog } from '@/components/list-kit'
import { ProviderIcon, type SignInMethod } from '@/components/provider-icon'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Spinner } from '@/components/ui/spinner'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { WechatCodeDialog } from '@/components/wechat-code-dialog'
import { useOAuthStart } from '@/hooks/use-oauth-start'
import type { BindingProvider, RedirectProvider } from '@/lib/oauth'
import { notify } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
import type { User } from '@/types/api'
import { useBindWechat, useUnbindProvider } from '../api/bindings'
import { EMAIL_BINDING_ID } from './email-binding-card'
import { TelegramBindDialog } from './telegram-bind-dialog'

interface Row {
  method: SignInMethod
  /** The bound identity; empty when not bound. */
  id: string
  /** The site offers this way to sign in (only then can it be bound). */
  enabled: boolean
}

const isRedirect = (method: SignInMethod): method is RedirectProvider =>
  method === 'github' || method === 'oidc' || method === 'lark'

/** Brings the e-mail card into view, its address field focused. */
function goToEmailCard() {
  const card = document.getElementById(EMAIL_BINDING_ID)
  card?.scrollIntoView?.({ behavior: 'smooth', block: 'start' })
  card?.querySelector<HTMLInputElement>('input[type="email"]')?.focus({ preventScroll: true })
}

/**
 * The ways to sign in to this account (spec 2.2, account binding): e-mail (bound in its own
 * card), GitHub, OpenID Connect, Lark, WeChat and Telegram. A method the site offers can be
 * bound (GitHub, OIDC, Lark: through the provider's page, which comes back as a binding;
 * WeChat: with the official account's code; Telegram: in a chat with the site's bot, which asks
 * for the access token); a bound one can be unbound after a confirmation.
 */
export function AccountBindingCard({ user }: { user: User }) {
  const { t } = useTranslation()
  const site = useSiteInfo()
  const { start, working } = useOAuthStart()
  const wechat = useBindWechat()
  const unbind = useUnbindProvider()
  const [wechatOpen, setWechatOpen] = useState(false)
  const [telegramOpen, setTelegramOpen] = useState(false)
  const [unbinding, setUnbinding] = useState<BindingProvider | null>(null)

  const rows: Row[] = [
    { method: 'email', id: user.email ?? '', enabled: true },
    { method: 'github', id: user.github_id ?? '', enabled: site.github_oauth },
    { method: 'oidc', id: user.oidc_id ?? '', enabled: site.oidc_auth },
    { method: 'lark', id: user.lark_id ?? '', enabled: site.lark_login },
    { method: 'wechat', id: user.wechat_id ?? '', enabled: site.wechat_login },
    { method: 'telegram', id: user.telegram_id ? String(user.telegram_id) : '', enabled: site.telegram_bot.trim() !== '' },
  ]
  const name = (method: SignInMethod) => t(`auth:providers.${method}`)
  const busy = working !== null || wechat.isPending

  const bindWechat = (code: string) =>
    wechat.mutate(code, {
      onSuccess: () => {
        setWechatOpen(false)
        notify.success(t('auth:oauth.bound', { provider: name('wechat') }))
      },
    })

  const confirmUnbind = () => {
    if (!unbinding) return
    const provider = unbinding
    unbind.mutate(provider, {
      // A refusal (the last way to sign in) is told by the central error handler.
      onSettled: () => setUnbinding(null),
      onSuccess: () => notify.success(t('profile:binding.unbound', { provider: name(provider) })),
    })
  }

  const action = ({ method, id, enabled }: Row) => {
    if (method === 'email') {
      return (
        <Button type="button" variant="outline" size="sm" onClick={goToEmailCard} data-testid="binding-email-edit">
          <PencilIcon />
          {id ? t('profile:binding.change') : t('profile:binding.bind')}
        </Button>
      )
    }
    // Telegram is bound in Telegram (the bot asks for the access token); unbound like the others.
    if (method === 'telegram' && !id) {
      if (!enabled) {
        return (
          <span className="text-xs text-muted-foreground" data-testid="binding-telegram-later">
            {t('profile:binding.telegramLater')}
          </span>
        )
      }
      return (
        <Button type="button" size="sm" disabled={busy} onClick={() => setTelegramOpen(true)} data-testid="binding-telegram-bind">
          <Link2Icon />
          {t('profile:binding.bind')}
        </Button>
      )
    }
    if (id) {
      return (
        <Button
          type="button"
          variant="outline"
          size="sm"
          className="text-destructive hover:text-destructive"
          onClick={() => setUnbinding(method)}
          data-testid={`binding-${method}-unbind`}
        >
          <Link2OffIcon />
          {t('profile:binding.unbind')}
        </Button>
      )
    }
    if (!enabled) {
      return (
        <span className="text-xs text-muted-foreground" data-testid={`binding-${method}-off`}>
          {t('profile:binding.notOffered')}
        </span>
      )
    }
    const pending = method === 'wechat' ? wechat.isPending : working === method
    return (
      <Button
        type="button"
        size="sm"
        disabled={busy}
        aria-busy={pending}
        onClick={() => (isRedirect(method) ? start(method) : setWechatOpen(true))}
        data-testid={`binding-${method}-bind`}
      >
        {pending ? <Spinner /> : <Link2Icon />}
        {t('profile:binding.bind')}
      </Button>
    )
  }

  return (
    <Card data-testid="account-binding">
      <CardHeader>
        <CardTitle>
          <h2>{t('profile:binding.title')}</h2>
        </CardTitle>
        <CardDescription>{t('profile:binding.description')}</CardDescription>
      </CardHeader>
      <CardContent className="p-0 sm:px-6">
        <Table cards data-testid="binding-table">
          <TableHeader>
            <TableRow>
              <TableHead>{t('profile:binding.method')}</TableHead>
              <TableHead>{t('profile:binding.status')}</TableHead>
              <TableHead data-card="actions" className="text-right">
                {t('profile:binding.actions')}
              </TableHead>
            </TableRow>
          </TableHeader>
          <TableBody>
            {rows.map((row) => (
              <TableRow key={row.method} data-testid={`binding-${row.method}`}>
                <TableCell data-card="title">
                  <span className="flex items-center gap-2 font-medium">
                    <ProviderIcon method={row.method} className="size-4 text-muted-foreground" />
                    {name(row.method)}
                  </span>
                </TableCell>
                <TableCell data-testid={`binding-${row.method}-status`}>
                  {row.id ? (
                    <span className="inline-flex flex-wrap items-center gap-2">
                      <Badge variant="success">{t('profile:binding.bound')}</Badge>
                      <span className="font-mono text-xs break-all">{row.id}</span>
                    </span>
                  ) : (
                    <Badge variant="outline">{t('profile:binding.notBound')}</Badge>
                  )}
                </TableCell>
                <TableCell data-card="actions">
                  <div className="flex justify-end">{action(row)}</div>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </CardContent>

      <WechatCodeDialog
        open={wechatOpen}
        onOpenChange={setWechatOpen}
        qrcode={site.wechat_qrcode}
        onSubmit={bindWechat}
        pending={wechat.isPending}
        submitLabel={t('profile:binding.bind')}
      />
      {site.telegram_bot.trim() !== '' && (
        <TelegramBindDialog bot={site.telegram_bot} open={telegramOpen} onOpenChange={setTelegramOpen} />
      )}
      <ConfirmDialog
        open={unbinding !== null}
        onOpenChange={(open) => !open && setUnbinding(null)}
        title={t('profile:binding.unbindTitle', { provider: unbinding ? name(unbinding) : '' })}
        description={t('profile:binding.unbindDescription', { provider: unbinding ? name(unbinding) : '' })}
        confirmLabel={t('profile:binding.unbind')}
        onConfirm={confirmUnbind}
        pending={unbind.isPending}
        testId="binding-unbind-confirm"
      />
    </Card>
  )
}
