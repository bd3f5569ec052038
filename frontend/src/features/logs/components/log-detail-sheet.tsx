import { CopyIcon } from 'lucide-react'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Sheet, SheetContent, SheetDescription, SheetTitle } from '@/components/ui/sheet'
import { copyText } from '@/lib/clipboard'
import { formatAmount, formatDuration, formatTimestamp, renderQuota, type QuotaDisplay } from '@/lib/format'
import { notify, notifyCopied } from '@/lib/toast'
import type { LogEntry } from '@/types/api'
import { costLines, parseCostMeta, USAGE_FIELDS } from '../breakdown'
import { CacheHitBadge, LogTypeBadge } from './log-type-badge'

function Row({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-[8.5rem_minmax(0,1fr)] gap-2 py-1.5 text-sm">
      <dt className="text-muted-foreground">{label}</dt>
      <dd className="min-w-0 break-words" data-testid={testId}>
        {children}
      </dd>
    </div>
  )
}

/** Every field of one log, and how its cost was computed (issue #13: the breakdown). */
export function LogDetailSheet({
  log,
  admin,
  display,
  contentText,
  onOpenChange,
}: {
  log: LogEntry | null
  admin: boolean
  display: QuotaDisplay
  /** The log's text as the list shows it (translated where the console knows the event). */
  contentText: (log: LogEntry) => string
  onOpenChange: (open: boolean) => void
}) {
  const { t } = useTranslation()
  const meta = parseCostMeta(log?.metadata)
  const lines = log ? costLines(log, meta) : []
  const money = (quota: number) => renderQuota(quota, display)
  const copyRequestId = async (id: string) => {
    if (await copyText(id)) notifyCopied(id, 'request-id.txt')
    else notify.warning(t('common:copy.failed'))
  }
  return (
    <Sheet open={log !== null} onOpenChange={onOpenChange}>
      <SheetContent side="right" className="w-full gap-3 overflow-y-auto p-5 sm:w-[460px]" data-testid="log-detail">
        {log && (
          <>
            <div className="flex items-center gap-2">
              <SheetTitle className="text-lg font-semibold">{t('logs:detail.title')}</SheetTitle>
              <LogTypeBadge log={log} />
              <CacheHitBadge log={log} />
            </div>
            <SheetDescription className="text-sm text-muted-foreground">{formatTimestamp(log.created_at)}</SheetDescription>
            <dl className="divide-y">
              {admin && <Row label={t('logs:columns.user')}>{`${log.username || '-'} (#${log.user_id})`}</Row>}
              {admin && (
                <Row label={t('logs:columns.channel')}>
                  {log.channel_id ? `#${log.channel_id} ${log.channel_name ?? ''}`.trim() : '-'}
                </Row>
              )}
              <Row label={t('logs:columns.model')}>{log.model_name || '-'}</Row>
              <Row label={t('logs:columns.token')}>{log.token_name || '-'}</Row>
              <Row label={t('logs:columns.group')}>{log.group || '-'}</Row>
              <Row label={t('logs:columns.ip')}>{log.source_ip || '-'}</Row>
              <Row label={t('logs:detail.requestId')}>
                {log.request_id ? (
                  <span className="flex items-center gap-1">
                    <code className="font-mono text-xs break-all" data-testid="log-detail-request-id">
                      {log.request_id}
                    </code>
                    <Button
                      variant="ghost"
                      size="icon"
                      className="size-7"
                      aria-label={t('common:actions.copy')}
                      title={t('common:actions.copy')}
                      onClick={() => void copyRequestId(log.request_id)}
                    >
                      <CopyIcon />
                    </Button>
                  </span>
                ) : (
                  '-'
                )}
              </Row>
              <Row label={t('logs:columns.duration')}>
                {formatDuration(log.use_time_ms)}
                {log.is_stream && (
                  <span className="text-muted-foreground">
                    {' · '}
                    {t('logs:detail.firstResponse', { time: formatDuration(log.first_response_ms) })}
                  </span>
                )}
              </Row>
              <Row label={t('logs:detail.stream')}>{log.is_stream ? t('logs:detail.yes') : t('logs:detail.no')}</Row>
              {log.type === 5 && (
                <>
                  <Row label={t('logs:detail.status')} testId="log-detail-status">
                    {meta.status ?? '-'}
                    {meta.code && <code className="ml-2 font-mono text-xs">{meta.code}</code>}
                  </Row>
                  <Row label={t('logs:detail.reason')} testId="log-detail-reason">
                    {log.content || '-'}
                  </Row>
                </>
              )}
              {log.type !== 5 && (
                <Row label={t('logs:columns.detail')} testId="log-detail-content">
                  {contentText(log) || '-'}
                </Row>
              )}
            </dl>

            {(log.type === 2 || log.quota !== 0) && (
              <section className="rounded-lg border p-3" aria-label={t('logs:detail.cost')} data-testid="log-breakdown">
                <h3 className="mb-2 text-sm font-medium">{t('logs:detail.cost')}</h3>
                <dl className="grid gap-1 text-sm">
                  {lines.map((l) => (
                    <div key={l.id} className="flex flex-wrap justify-between gap-2" data-testid={`log-breakdown-${l.id}`}>
                      <dt className="text-muted-foreground">
                        {t(`logs:detail.line.${l.id}`, {
                          amount: l.amount.toLocaleString(),
                          ratio: formatAmount(l.ratio).replace(/\.?0+$/, ''),
                        })}
                      </dt>
                      <dd className="tabular-nums">{money(l.quota)}</dd>
                    </div>
                  ))}
                  {meta.groupRatio !== undefined && meta.groupRatio !== 1 && (
                    <div className="flex justify-between gap-2 text-muted-foreground">
                      <dt>{t('logs:detail.groupRatio')}</dt>
                      <dd className="tabular-nums">×{meta.groupRatio}</dd>
                    </div>
                  )}
                  {USAGE_FIELDS.filter((f) => meta.usage[f]).map((f) => (
                    <div key={f} className="flex justify-between gap-2 text-muted-foreground" data-testid={`log-usage-${f}`}>
                      <dt>{t(`logs:detail.usage.${f}`)}</dt>
                      <dd className="tabular-nums">{meta.usage[f]?.toLocaleString()}</dd>
                    </div>
                  ))}
                  {meta.usageEstimated && (
                    <p className="text-xs text-amber-700 dark:text-amber-300" data-testid="log-usage-estimated">
                      {t('logs:detail.estimated')}
                    </p>
                  )}
                  {(log.cache_hit || meta.cacheFullQuota !== undefined) && (
                    <p className="text-xs text-emerald-700 dark:text-emerald-300" data-testid="log-cache-hit-cost">
                      {meta.cacheFullQuota !== undefined
                        ? t('logs:detail.cacheHit', {
                            full: money(meta.cacheFullQuota),
                            saved: money(meta.cacheSavedQuota ?? Math.max(0, meta.cacheFullQuota - log.quota)),
                          })
                        : t('logs:detail.cacheHitNoPrice')}
                    </p>
                  )}
                  {meta.uncappedQuota !== undefined && (
                    <div className="flex justify-between gap-2 text-muted-foreground" data-testid="log-uncapped">
                      <dt>{t('logs:detail.uncapped')}</dt>
                      <dd className="tabular-nums">{money(meta.uncappedQuota)}</dd>
                    </div>
                  )}
                  <div className="mt-1 flex justify-between gap-2 border-t pt-2 font-medium">
                    <dt>{t('logs:detail.charged')}</dt>
                    <dd className="tabular-nums" data-testid="log-detail-quota">
                      {money(log.quota)}
                      {display.displayInCurrency && (
                        <span className="ml-2 text-xs font-normal text-muted-foreground">
                          {t('logs:detail.units', { units: log.quota.toLocaleString() })}
                        </span>
                      )}
                    </dd>
                  </div>
                </dl>
              </section>
            )}
            {log.type === 2 && <Badge variant="outline" className="self-start">{meta.priceType === 'times' ? t('logs:detail.perCall') : t('logs:detail.perToken')}</Badge>}
          </>
        )}
      </SheetContent>
    </Sheet>
  )
}
