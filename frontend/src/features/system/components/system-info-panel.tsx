import type { TFunction } from 'i18next'
import { useTranslation } from 'react-i18next'
import { ListState } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatBytes, formatTimestamp, usageLevel } from '@/lib/format'
import { cn } from '@/lib/utils'
import { useSystemInfo } from '../api/queries'
import type { Lease } from '../types'

const BAR = { green: 'bg-green-500', orange: 'bg-orange-500', red: 'bg-red-500' } as const

function Meter({ label, percent, detail, testId }: { label: string; percent: number; detail: string; testId: string }) {
  const p = Math.min(100, Math.max(0, percent))
  return (
    <div className="grid gap-2 rounded-lg border p-4">
      <div className="flex items-baseline justify-between gap-2">
        <span className="text-sm text-muted-foreground">{label}</span>
        <span className="text-2xl font-semibold tabular-nums" data-testid={testId}>
          {p.toFixed(1)}%
        </span>
      </div>
      <div
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(p)}
        className="h-2.5 overflow-hidden rounded-full bg-muted"
      >
        <div className={cn('h-full rounded-full transition-all', BAR[usageLevel(p)])} style={{ width: `${p}%` }} />
      </div>
      <span className="text-xs text-muted-foreground">{detail}</span>
    </div>
  )
}

/** A lease's job as people read it: a translated label for the known names, else the raw name. */
function leaseLabel(name: string, t: TFunction): string {
  switch (name) {
    case 'telegram':
      return t('system:leases.jobs.telegram')
    case 'task-poll':
      return t('system:leases.jobs.taskPoll')
    case 'channel-test':
      return t('system:leases.jobs.channelTest')
    case 'local-ledger':
      return t('system:leases.jobs.localLedger')
    default:
      return name.startsWith('invoice') ? t('system:leases.jobs.invoice', { name }) : name
  }
}

/** Which node runs each cluster-wide background job (the `leases` of GET /api/system/info). */
function LeasesCard({ leases }: { leases: Lease[] }) {
  const { t } = useTranslation()
  return (
    <Card data-testid="system-leases">
      <CardHeader>
        <CardTitle>
          <h2>{t('system:leases.title')}</h2>
        </CardTitle>
        <CardDescription>{t('system:leases.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <ListState loading={false} empty={leases.length === 0} emptyText={t('system:leases.empty')} emptyTestId="system-leases-empty">
          <Table cards>
            <TableHeader>
              <TableRow>
                <TableHead>{t('system:leases.columns.job')}</TableHead>
                <TableHead>{t('system:leases.columns.node')}</TableHead>
                <TableHead>{t('system:leases.columns.state')}</TableHead>
                <TableHead>{t('system:leases.columns.expiresAt')}</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {leases.map((l) => {
                const label = leaseLabel(l.name, t)
                return (
                  <TableRow key={l.name} data-testid={`system-lease-${l.name}`}>
                    <TableCell data-card="title" className="font-medium" data-testid="system-lease-job">
                      <span title={label === l.name ? undefined : l.name}>{label}</span>
                    </TableCell>
                    <TableCell>
                      <span
                        className={cn('font-mono text-xs break-all', !l.held && 'text-muted-foreground')}
                        data-testid="system-lease-holder"
                      >
                        {l.holder || '-'}
                      </span>
                    </TableCell>
                    <TableCell>
                      <Badge
                        variant={l.held ? 'success' : 'secondary'}
                        title={l.held ? t('system:leases.runningOn', { node: l.holder }) : t('system:leases.idleHint')}
                        data-testid="system-lease-state"
                      >
                        {l.held ? t('system:leases.running') : t('system:leases.idle')}
                      </Badge>
                    </TableCell>
                    <TableCell className="whitespace-nowrap tabular-nums" data-testid="system-lease-expires">
                      {formatTimestamp(l.expires_at)}
                    </TableCell>
                  </TableRow>
                )
              })}
            </TableBody>
          </Table>
        </ListState>
      </CardContent>
    </Card>
  )
}

/**
 * CPU and memory of the node that answers, plus its version and uptime; then which node runs
 * each cluster-wide background job.
 */
export function SystemInfoPanel({ intervalMs }: { intervalMs: number }) {
  const { t } = useTranslation()
  const info = useSystemInfo(intervalMs)
  const d = info.data
  const up = d?.uptime_seconds ?? 0
  const facts = d
    ? [
        { id: 'version', label: t('system:info.version'), value: d.version },
        { id: 'backend', label: t('system:info.backend'), value: d.backend },
        { id: 'redis', label: t('system:info.redis'), value: d.redis ? t('system:info.on') : t('system:info.off') },
        { id: 'start', label: t('system:info.startTime'), value: formatTimestamp(d.start_time) },
        {
          id: 'uptime',
          label: t('system:info.uptime'),
          value: t('system:info.uptimeValue', {
            days: Math.floor(up / 86_400),
            hours: Math.floor((up % 86_400) / 3600),
            minutes: Math.floor((up % 3600) / 60),
          }),
        },
        { id: 'pending', label: t('system:info.pending'), value: String(d.pending_consume_records) },
      ]
    : []
  return (
    <>
      <Card>
        <CardHeader>
          <CardTitle>
            <h2>{t('system:info.title')}</h2>
          </CardTitle>
        </CardHeader>
        <CardContent>
          <ListState loading={info.isPending} query={info} empty={!d} emptyText={t('system:info.unavailable')} emptyTestId="system-info-empty">
            {d && (
              <div className="grid grid-cols-1 gap-4">
                <div className="grid gap-4 md:grid-cols-2">
                  <Meter
                    label={t('system:info.cpu')}
                    percent={d.cpu_percent}
                    detail={t('system:info.cores', { count: d.cores })}
                    testId="system-cpu"
                  />
                  <Meter
                    label={t('system:info.memory')}
                    percent={d.memory.total_bytes > 0 ? (d.memory.used_bytes / d.memory.total_bytes) * 100 : 0}
                    detail={t('system:info.memoryDetail', {
                      used: formatBytes(d.memory.used_bytes),
                      total: formatBytes(d.memory.total_bytes),
                      rss: formatBytes(d.memory.process_rss_bytes),
                    })}
                    testId="system-memory"
                  />
                </div>
                <dl className="grid grid-cols-2 gap-3 lg:grid-cols-3">
                  {facts.map((f) => (
                    <div key={f.id} className="rounded-lg border bg-background/50 p-3">
                      <dt className="text-xs text-muted-foreground">{f.label}</dt>
                      <dd className="mt-1 truncate font-medium" data-testid={`system-${f.id}`}>
                        {f.value}
                      </dd>
                    </div>
                  ))}
                </dl>
              </div>
            )}
          </ListState>
        </CardContent>
      </Card>
      {d && <LeasesCard leases={d.leases ?? []} />}
    </>
  )
}
