import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '@/components/data-table'
import { FilterBar, FilterInput, FilterSelect, FilterTime } from '@/components/filter-bar'
import { Badge } from '@/components/ui/badge'
import { useListScreen } from '@/hooks/use-list-screen'
import { formatDuration, formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { useQuotaDisplay } from '@/stores/site'
import type { LogEntry } from '@/types/api'
import { useLogStat, useLogs } from '../api/get-logs'
import type { LogFilters, LogScope } from '../api/keys'
import { logMessage } from '../log-message'
import { LogDetailSheet } from './log-detail-sheet'
import { CacheHitBadge, LOG_TYPES, LogTypeBadge } from './log-type-badge'

/* The filters as they live in the address bar (reload and share keep them); times in unix seconds. */
const SELF_FILTERS = { type: 0, model_name: '', token_name: '', group: '', source_ip: '', start: 0, end: 0 }
const ALL_FILTERS = { ...SELF_FILTERS, username: '', channel: '' }
type Filters = typeof SELF_FILTERS & Partial<Pick<typeof ALL_FILTERS, 'username' | 'channel'>>

/** Only administrators have the user and channel columns. */
const ADMIN_COLUMNS = new Set(['user', 'channel'])

/**
 * Logs with totals, filters kept in the address bar, column settings, a detail view with the
 * cost breakdown, and cards on phones. Administrators see everyone's (GET /api/log) and more
 * filters and columns.
 */
export function LogsPanel({ admin }: { admin: boolean }) {
  const { t } = useTranslation()
  const display = useQuotaDisplay()
  // Recharge, management and system logs in the reader's language (see log-message.ts).
  const contentText = (l: LogEntry) => logMessage(l, t, display)
  const scope: LogScope = admin ? 'all' : 'self'

  const list = useListScreen<LogEntry, Filters>({ filters: admin ? ALL_FILTERS : SELF_FILTERS })
  const { start, end, ...rest } = list.filters
  const filters: LogFilters = {
    username: '',
    channel: '',
    ...rest,
    type: rest.type <= 5 ? rest.type : 0,
    start_timestamp: start,
    end_timestamp: end,
  }
  const logs = useLogs(scope, { ...filters, page: list.page, size: list.size })
  const stat = useLogStat(scope, filters)
  const [detail, setDetail] = useState<LogEntry | null>(null)

  const money = (quota: number) => renderQuota(quota, display)

  const field = (key: 'model_name' | 'token_name' | 'group' | 'source_ip' | 'username' | 'channel', label: string, placeholder?: string) => (
    <FilterInput label={label} {...list.bind(key)} placeholder={placeholder} data-testid={`log-filter-${key}`} />
  )
  const time = (key: 'start' | 'end', label: string) => (
    <FilterTime label={label} value={list.draft[key]} onChange={(v) => list.setDraft({ [key]: v })} data-testid={`log-filter-${key}`} />
  )

  const duration = (log: LogEntry) => (
    <span className="whitespace-nowrap">
      {formatDuration(log.use_time_ms)}
      {log.is_stream && (
        <>
          <Badge variant="outline" className="ml-1.5 px-1.5 py-0 text-[10px]">
            {t('logs:stream')}
          </Badge>
          <span className="block text-xs text-muted-foreground">
            {t('logs:firstResponse', { time: formatDuration(log.first_response_ms) })}
          </span>
        </>
      )}
    </span>
  )

  // Time, model, cost and detail are never hidden: without them a row means nothing (and the
  // detail holds everything else).
  const allColumns: Column<LogEntry>[] = [
    {
      id: 'time',
      header: t('logs:columns.time'),
      essential: true,
      cell: (l) => <span className="whitespace-nowrap">{formatTimestamp(l.created_at)}</span>,
    },
    { id: 'user', header: t('logs:columns.user'), cell: (l) => l.username || '-' },
    {
      id: 'channel',
      header: t('logs:columns.channel'),
      cell: (l) => (l.channel_id ? `${l.channel_id} ${l.channel_name ?? ''}`.trim() : '-'),
    },
    { id: 'type', header: t('logs:columns.type'), cell: (l) => <LogTypeBadge log={l} /> },
    {
      id: 'model',
      header: t('logs:columns.model'),
      essential: true,
      // The model column is never hidden, so the cache mark always shows.
      cell: (l) => (
        <span className="flex flex-wrap items-center gap-1.5">
          <span className="break-all">{l.model_name || '-'}</span>
          <CacheHitBadge log={l} />
        </span>
      ),
    },
    { id: 'token', header: t('logs:columns.token'), cell: (l) => l.token_name || '-' },
    { id: 'group', header: t('logs:columns.group'), cell: (l) => l.group || '-' },
    { id: 'promptTokens', header: t('logs:columns.promptTokens'), right: true, cellClassName: 'tabular-nums', cell: (l) => renderNumber(l.prompt_tokens) },
    {
      id: 'completionTokens',
      header: t('logs:columns.completionTokens'),
      right: true,
      cellClassName: 'tabular-nums',
      cell: (l) => renderNumber(l.completion_tokens),
    },
    {
      id: 'quota',
      header: t('logs:columns.quota'),
      right: true,
      cellClassName: 'tabular-nums',
      essential: true,
      cell: (l) => (
        <span className="whitespace-nowrap" data-testid="log-quota">
          {money(l.quota)}
        </span>
      ),
    },
    { id: 'duration', header: t('logs:columns.duration'), right: true, cellClassName: 'tabular-nums', cell: duration },
    {
      id: 'ip',
      header: t('logs:columns.ip'),
      hiddenByDefault: true,
      cell: (l) => <span className="font-mono text-xs">{l.source_ip || '-'}</span>,
    },
    {
      id: 'detail',
      header: t('logs:columns.detail'),
      essential: true,
      cell: (l) => (
        <button
          type="button"
          className="line-clamp-2 max-w-sm min-w-40 text-left text-xs break-words text-muted-foreground hover:text-foreground hover:underline"
          onClick={() => setDetail(l)}
          data-testid="log-detail-open"
        >
          {(l.type === 5 ? l.content : contentText(l)) || t('logs:detail.open')}
        </button>
      ),
    },
  ]
  const columns = allColumns.filter((c) => admin || !ADMIN_COLUMNS.has(c.id))

  const card = (l: LogEntry) => (
    <li key={l.id} data-testid={`log-card-${l.id}`}>
      <button type="button" className="grid w-full gap-1 p-4 text-left" onClick={() => setDetail(l)}>
        <span className="flex items-center justify-between gap-2">
          <span className="flex items-center gap-1.5">
            <LogTypeBadge log={l} />
            <CacheHitBadge log={l} />
          </span>
          <span className="font-medium tabular-nums" data-testid="log-quota">
            {money(l.quota)}
          </span>
        </span>
        <span className="text-sm font-medium break-all">{l.model_name || contentText(l) || '-'}</span>
        <span className="text-xs text-muted-foreground">
          {formatTimestamp(l.created_at)}
          {l.type === 2 &&
            ` · ${renderNumber(l.prompt_tokens)} / ${renderNumber(l.completion_tokens)} · ${formatDuration(l.use_time_ms)}`}
        </span>
      </button>
    </li>
  )

  const totals = stat.data
  const totalItems: { id: string; label: string; value: string }[] = totals
    ? [
        { id: 'quota', label: t('logs:totals.cost'), value: money(totals.quota) },
        { id: 'requests', label: t('logs:totals.requests'), value: totals.request_count.toLocaleString() },
        { id: 'prompt', label: t('logs:totals.promptTokens'), value: renderNumber(totals.prompt_tokens) },
        { id: 'completion', label: t('logs:totals.completionTokens'), value: renderNumber(totals.completion_tokens) },
        { id: 'rpm', label: t('logs:totals.rpm'), value: totals.rpm.toLocaleString() },
        { id: 'tpm', label: t('logs:totals.tpm'), value: renderNumber(totals.tpm) },
      ]
    : []

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        label={t('logs:filters.label')}
        onSearch={list.search}
        onReset={list.reset}
        className="sm:grid-cols-2 lg:grid-cols-4"
        testId="log-filters"
        searchTestId="log-search"
        resetTestId="log-reset"
      >
        <FilterSelect label={t('logs:filters.type')} {...list.bind('type')} data-testid="log-filter-type">
          {LOG_TYPES.map((x) => (
            <option key={x.value} value={x.value}>
              {t(`logs:types.${x.key}`)}
            </option>
          ))}
        </FilterSelect>
        {field('model_name', t('logs:filters.modelName'), t('logs:filters.prefixHint'))}
        {field('token_name', t('logs:filters.tokenName'), t('logs:filters.prefixHint'))}
        {field('group', t('logs:filters.group'))}
        {field('source_ip', t('logs:filters.sourceIp'))}
        {admin && field('username', t('logs:filters.username'))}
        {admin && field('channel', t('logs:filters.channel'))}
        {time('start', t('logs:filters.start'))}
        {time('end', t('logs:filters.end'))}
      </FilterBar>

      {totals && (
        <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6" data-testid="log-totals" aria-label={t('logs:totals.label')}>
          {totalItems.map((x) => (
            <div key={x.id} className="rounded-lg border bg-card p-3">
              <dt className="text-xs text-muted-foreground">{x.label}</dt>
              <dd className="mt-1 text-lg font-semibold tabular-nums" data-testid={`log-total-${x.id}`}>
                {x.value}
              </dd>
            </div>
          ))}
          <p className="col-span-full text-xs text-muted-foreground">{t('logs:totals.note')}</p>
        </dl>
      )}

      <DataTable
        name="log"
        cardsTestId="logs-cards"
        columns={columns}
        query={logs}
        list={list}
        rowProps={(l) => ({ className: l.type === 5 ? 'bg-red-50/60 dark:bg-red-950/20' : undefined })}
        card={card}
        settings={{ storageKey: `logColumns.${scope}`, testId: 'log-column' }}
        emptyText={t('logs:empty')}
      />

      <LogDetailSheet
        log={detail}
        admin={admin}
        display={display}
        contentText={contentText}
        onOpenChange={(open) => !open && setDetail(null)}
      />
    </div>
  )
}
