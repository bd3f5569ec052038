import { RefreshCwIcon, SettingsIcon, TriangleAlertIcon } from 'lucide-react'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { ListState } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { useTelegramStatus } from '../api/get-status'
import { useReloadTelegramMenu } from '../api/reload'
import { botLink, botUsername } from '@/lib/telegram'
import type { TelegramStatus } from '../types'

/** Where the bot token is set: the system tab of the settings. */
export const TELEGRAM_SETTINGS_URL = '/panel/setting?tab=system'

function ModeBadge({ status }: { status: TelegramStatus }) {
  const { t } = useTranslation()
  if (status.online || status.mode === 'webhook') {
    return (
      <Badge variant="success" data-testid="telegram-mode">
        {t('telegram:status.online')}
      </Badge>
    )
  }
  if (status.mode === 'polling') {
    return (
      <Badge variant="secondary" data-testid="telegram-mode">
        {t('telegram:status.offline')}
      </Badge>
    )
  }
  return (
    <Badge variant="outline" data-testid="telegram-mode">
      {t('telegram:status.off')}
    </Badge>
  )
}

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid gap-1">
      <dt className="text-xs text-muted-foreground">{label}</dt>
      <dd className="flex min-w-0 flex-wrap items-center gap-2 text-sm">{children}</dd>
    </div>
  )
}

/**
 * The bot as this server runs it: configured or not (with the way to the setting), online
 * (webhook) or offline (polling), its username, whether this server receives its updates and
 * the last failure. Reload registers the commands with Telegram; it is asked for after the menu
 * changes (`reload_needed`, or a change made here since the last reload).
 */
export function TelegramStatusCard({ menuChanged, onReloaded }: { menuChanged: boolean; onReloaded: () => void }) {
  const { t } = useTranslation()
  const status = useTelegramStatus()
  const reload = useReloadTelegramMenu()
  const s = status.data
  const reloadNeeded = menuChanged || s?.reload_needed === true

  const doReload = () =>
    reload.mutate(undefined, {
      onSuccess: ({ commands }) => {
        onReloaded()
        notify.success(t('telegram:toast.reloaded', { count: commands }))
      },
    })

  return (
    <Card data-testid="telegram-status">
      <CardHeader className="flex-row flex-wrap items-start justify-between gap-3">
        <div className="grid gap-1.5">
          <CardTitle>
            <h2>{t('telegram:status.title')}</h2>
          </CardTitle>
          <CardDescription>{t('telegram:status.description')}</CardDescription>
        </div>
        <Button
          variant={reloadNeeded ? 'default' : 'outline'}
          onClick={doReload}
          disabled={reload.isPending}
          aria-busy={reload.isPending}
          data-testid="telegram-reload"
        >
          {reload.isPending ? <Spinner /> : <RefreshCwIcon />}
          {reload.isPending ? t('telegram:reload.pending') : t('telegram:reload.button')}
        </Button>
      </CardHeader>
      <CardContent className="grid gap-4">
        {reloadNeeded && (
          <p
            className="flex items-start gap-2 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-200"
            role="status"
            data-testid="telegram-reload-needed"
          >
            <TriangleAlertIcon aria-hidden className="mt-0.5 size-4 shrink-0" />
            {t('telegram:reload.needed')}
          </p>
        )}
        <ListState loading={status.isPending} query={status} empty={!s} emptyText={t('telegram:status.unknown')} emptyTestId="telegram-status-empty">
          {s && (
            <>
              <dl className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
                <Field label={t('telegram:status.configured')}>
                  <Badge variant={s.configured ? 'success' : 'warning'} data-testid="telegram-configured">
                    {s.configured ? t('telegram:status.configuredYes') : t('telegram:status.configuredNo')}
                  </Badge>
                </Field>
                <Field label={t('telegram:status.mode')}>
                  <ModeBadge status={s} />
                </Field>
                <Field label={t('telegram:status.bot')}>
                  {botUsername(s.username) ? (
                    <a
                      href={botLink(s.username)}
                      target="_blank"
                      rel="noopener noreferrer"
                      className="font-mono break-all text-primary underline-offset-2 hover:underline"
                      data-testid="telegram-username"
                    >
                      @{botUsername(s.username)}
                    </a>
                  ) : (
                    <span className="text-muted-foreground" data-testid="telegram-username">
                      {t('telegram:status.unknownBot')}
                    </span>
                  )}
                </Field>
                <Field label={t('telegram:status.running')}>
                  <Badge variant={s.running ? 'success' : 'outline'} data-testid="telegram-running">
                    {s.running ? t('telegram:status.runningYes') : t('telegram:status.runningNo')}
                  </Badge>
                </Field>
              </dl>
              {!s.configured && (
                <div
                  className="flex flex-wrap items-center gap-3 rounded-lg border border-dashed p-3 text-sm"
                  data-testid="telegram-not-configured"
                >
                  <span className="flex-1 text-muted-foreground">{t('telegram:status.notConfigured')}</span>
                  <Button asChild variant="outline" size="sm">
                    <Link to={TELEGRAM_SETTINGS_URL} data-testid="telegram-settings-link">
                      <SettingsIcon />
                      {t('telegram:status.openSettings')}
                    </Link>
                  </Button>
                </div>
              )}
              {s.last_error.trim() !== '' && (
                <div className="grid gap-1 rounded-lg border border-destructive/40 bg-destructive/5 p-3 text-sm" data-testid="telegram-last-error">
                  <span className="font-medium text-destructive">{t('telegram:status.lastError')}</span>
                  <span className="font-mono text-xs break-words">{s.last_error}</span>
                </div>
              )}
            </>
          )}
        </ListState>
      </CardContent>
    </Card>
  )
}
