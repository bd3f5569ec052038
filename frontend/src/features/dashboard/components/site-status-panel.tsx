import { ExternalLinkIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Badge } from '@/components/ui/badge'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { APP_VERSION } from '@/config'
import { formatTimestamp } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'

/** Whole days, hours and minutes since `start` (unix seconds). */
export function uptimeParts(start: number, now = Date.now() / 1000) {
  const s = Math.max(0, Math.floor(now - start))
  return { days: Math.floor(s / 86_400), hours: Math.floor((s % 86_400) / 3600), minutes: Math.floor((s % 3600) / 60) }
}

/** Status tab: the site's version, start time and uptime, addresses and the status page link. */
export function SiteStatusPanel() {
  const { t } = useTranslation()
  const site = useSiteInfo()
  const version = site.version || '-'
  const rows = [
    { id: 'name', label: t('dashboard:status.systemName'), value: site.system_name },
    {
      id: 'version',
      label: t('dashboard:status.version'),
      value: (
        <span className="flex items-center gap-2">
          {version}
          {site.version && site.version !== APP_VERSION && (
            <Badge variant="outline">{t('dashboard:status.consoleVersion', { version: APP_VERSION })}</Badge>
          )}
        </span>
      ),
    },
    {
      id: 'start',
      label: t('dashboard:status.startTime'),
      value: site.start_time ? formatTimestamp(site.start_time) : '-',
    },
    {
      id: 'uptime',
      label: t('dashboard:status.uptime'),
      value: site.start_time ? t('dashboard:status.uptimeValue', uptimeParts(site.start_time)) : '-',
    },
    { id: 'server', label: t('dashboard:status.serverAddress'), value: site.server_address || window.location.origin },
    {
      id: 'email',
      label: t('dashboard:status.emailVerification'),
      value: site.email_verification ? t('dashboard:status.on') : t('dashboard:status.off'),
    },
  ]
  return (
    <Card data-testid="site-status">
      <CardHeader>
        <CardTitle>
          <h2>{t('dashboard:status.title')}</h2>
        </CardTitle>
      </CardHeader>
      <CardContent className="grid grid-cols-1 gap-4">
        <dl className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-3">
          {rows.map((row) => (
            <div key={row.id} className="rounded-lg border bg-background/50 p-3">
              <dt className="text-xs text-muted-foreground">{row.label}</dt>
              <dd className="mt-1 truncate font-medium" data-testid={`status-${row.id}`}>
                {row.value}
              </dd>
            </div>
          ))}
        </dl>
        {site.UptimeEnabled && site.UptimeDomain && (
          <a
            href={site.UptimeDomain}
            target="_blank"
            rel="noreferrer"
            className="inline-flex items-center gap-1 text-sm font-medium text-primary underline-offset-4 hover:underline"
            data-testid="status-page-link"
          >
            {t('dashboard:status.statusPage')}
            <ExternalLinkIcon className="size-4" />
          </a>
        )}
      </CardContent>
    </Card>
  )
}
