import { ExternalLinkIcon, KeyRoundIcon, RefreshCwIcon } from 'lucide-react'
import { useRef } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Spinner } from '@/components/ui/spinner'
import { botLink, botUsername } from '@/lib/telegram'
import { notify } from '@/lib/toast'
import { useRefreshSelf } from '../api/refresh-self'
import { ACCESS_TOKEN_ID } from './access-token-card'

/** Brings the access-token card into view (the token the bot asks for is made there). */
function goToAccessToken() {
  const card = document.getElementById(ACCESS_TOKEN_ID)
  card?.scrollIntoView?.({ behavior: 'smooth', block: 'start' })
  card?.querySelector<HTMLButtonElement>('button')?.focus({ preventScroll: true })
}

/**
 * How Telegram is bound: in Telegram itself. The user opens the bot, sends /bind, then sends
 * the access token made on this page; "done" reads the account again to show the binding.
 */
export function TelegramBindDialog({ bot, open, onOpenChange }: { bot: string; open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useTranslation()
  const refresh = useRefreshSelf()
  const name = botUsername(bot)
  // Asked to go to the access token: once the dialog has closed, focus goes there, not back to Bind.
  const toToken = useRef(false)

  const check = () =>
    refresh.mutate(undefined, {
      onSuccess: (user) => {
        if (user.telegram_id) {
          notify.success(t('auth:oauth.bound', { provider: t('auth:providers.telegram') }))
          onOpenChange(false)
        } else {
          notify.info(t('profile:telegram.notYet'))
        }
      },
    })

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent
        closeLabel={t('common:actions.close')}
        onCloseAutoFocus={(e) => {
          if (!toToken.current) return
          toToken.current = false
          e.preventDefault()
          goToAccessToken()
        }}
        data-testid="telegram-bind-dialog"
      >
        <DialogHeader>
          <DialogTitle>{t('profile:telegram.bindTitle')}</DialogTitle>
          <DialogDescription>{t('profile:telegram.bindDescription')}</DialogDescription>
        </DialogHeader>
        <ol className="grid list-decimal gap-3 pl-5 text-sm">
          <li>
            <div className="grid gap-2">
              <span>{t('profile:telegram.step1', { bot: name })}</span>
              <Button asChild variant="outline" size="sm" className="w-fit">
                <a href={botLink(bot)} target="_blank" rel="noopener noreferrer" data-testid="telegram-bind-open">
                  <ExternalLinkIcon />
                  {t('profile:telegram.openBot', { bot: name })}
                </a>
              </Button>
            </div>
          </li>
          <li>
            <span>{t('profile:telegram.step2')}</span> <code className="rounded bg-muted px-1.5 py-0.5 font-mono text-xs">/bind</code>
          </li>
          <li>
            <div className="grid gap-2">
              <span>{t('profile:telegram.step3')}</span>
              <Button
                type="button"
                variant="outline"
                size="sm"
                className="w-fit"
                onClick={() => {
                  toToken.current = true
                  onOpenChange(false)
                }}
                data-testid="telegram-bind-token"
              >
                <KeyRoundIcon />
                {t('profile:telegram.goToToken')}
              </Button>
            </div>
          </li>
        </ol>
        <DialogFooter>
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            {t('common:actions.close')}
          </Button>
          <Button type="button" onClick={check} disabled={refresh.isPending} data-testid="telegram-bind-check">
            {refresh.isPending ? <Spinner /> : <RefreshCwIcon />}
            {t('profile:telegram.check')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
