import { Columns3Icon, RotateCcwIcon, SearchIcon } from 'lucide-react'
import { useId, useMemo, useState, type FormEvent, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import { DataPagination } from '@/components/data-pagination'
import { ListState } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import {
  DropdownMenu,
  DropdownMenuCheckboxItem,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { MOBILE_MAX_WIDTH } from '@/config'
import { useMediaQuery } from '@/hooks/use-media-query'
import { formatDuration, formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import type { LogEntry } from '@/types/api'
import { useLogStat, useLogs } from '../api/get-logs'
import type { LogListParams, LogScope } from '../api/keys'
import { logMessage } from '../log-message'
import { columnsFor, ESSENTIAL, loadVisible, resetVisible, saveVisible, type LogColumn } from '../columns'
import { fromLocalInput, paramsFromSearch, searchFromParams, toLocalInput } from '../url-state'
import { LogDetailSheet } from './log-detail-sheet'
import { CacheHitBadge, LOG_TYPES, LogTypeBadge } from './log-type-badge'

/** Form state of the filters: times as datetime-local text. */
interface FilterDraft {
  type: string
  model_name: string
  token_name: string
  group: string
  source_ip: string
  username: string
  channel: string
  start: string
  end: string
}

function draftOf(p: LogListParams): FilterDraft {
  return {
    type: String(p.type),
    model_name: p.model_name,
    token_name: p.token_name,
    group: p.group,
    source_ip: p.source_ip,
    username: p.username,
    channel: p.channel,
    start: toLocalInput(p.start_timestamp),
    end: toLocalInput(p.end_timestamp),
  }
}

function paramsOf(d: FilterDraft, size: number): LogListParams {
  return {
    type: Number(d.type) || 0,
    model_name: d.model_name.trim(),
    token_name: d.token_name.trim(),
    group: d.group.trim(),
    source_ip: d.source_ip.trim(),
    username: d.username.trim(),
    channel: d.channel.trim(),
    start_timestamp: fromLocalInput(d.start),
    end_timestamp: fromLocalInput(d.end),
    page: 1,
    size,
  }
}

/**
 * Logs with totals, filters kept in the address bar, column settings, a detail view with the
 * cost breakdown, and cards on phones. Administrators see everyone's (GET /api/log) and more
 * filters and columns.
 */
export function LogsPanel({ admin }: { admin: boolean }) {
  const { t } = useTranslation()
  const id = useId()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  // Recharge, management and system logs in the reader's language (see log-message.ts).
  const contentText = (l: LogEntry) => logMessage(l, t, display)
  const scope: LogScope = admin ? 'all' : 'self'
  const isPhone = useMediaQuery(`(max-width: ${MOBILE_MAX_WIDTH}px)`)

  const [search, setSearch] = useSearchParams()
  const searchKey = search.toString()
  const params = useMemo(() => paramsFromSearch(new URLSearchParams(searchKey), scope), [searchKey, scope])
  const { page, size, ...filters } = params
  const logs = useLogs(scope, params)
  const stat = useLogStat(scope, filters)

  // The form follows the address bar (a reload, back/forward); typing changes only the form.
  const [draft, setDraft] = useState<FilterDraft>(() => draftOf(params))
  const [draftFor, setDraftFor] = useState(searchKey)
  if (draftFor !== searchKey) {
    setDraftFor(searchKey)
    setDraft(draftOf(params))
  }

  const [visible, setVisible] = useState<LogColumn[]>(() => loadVisible(scope))
  const shown = (c: LogColumn) => visible.includes(c)
  const toggleColumn = (c: LogColumn, on: boolean) => {
    const next = columnsFor(scope).filter((x) => (x === c ? on : visible.includes(x)))
    setVisible(next)
    saveVisible(scope, next)
  }

  const [detail, setDetail] = useState<LogEntry | null>(null)

  const go = (p: LogListParams) => setSearch(searchFromParams(p))
  const set = (key: keyof FilterDraft) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [key]: e.target.value }))
  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    go(paramsOf(draft, size))
  }
  const onReset = () => go(paramsOf(draftOf(paramsFromSearch(new URLSearchParams(), scope)), size))

  const rows = logs.data?.data ?? []
  const total = logs.data?.total_count ?? 0
  const money = (quota: number) => renderQuota(quota, display)

  const field = (key: keyof FilterDraft, label: string, type = 'text', placeholder?: string) => (
    <div className="grid gap-1.5">
      <Label htmlFor={`${id}-${key}`}>{label}</Label>
      <Input
        id={`${id}-${key}`}
        type={type}
        value={draft[key]}
        onChange={set(key)}
        placeholder={placeholder}
        data-testid={`log-filter-${key}`}
      />
    </div>
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

  const cell: Record<LogColumn, { head: string; right?: boolean; render: (l: LogEntry) => ReactNode }> = {
    time: { head: t('logs:columns.time'), render: (l) => <span className="whitespace-nowrap">{formatTimestamp(l.created_at)}</span> },
    user: { head: t('logs:columns.user'), render: (l) => l.username || '-' },
    channel: {
      head: t('logs:columns.channel'),
      render: (l) => (l.channel_id ? `${l.channel_id} ${l.channel_name ?? ''}`.trim() : '-'),
    },
    type: { head: t('logs:columns.type'), render: (l) => <LogTypeBadge log={l} /> },
    model: {
      head: t('logs:columns.model'),
      // The model column is never hidden, so the cache mark always shows.
      render: (l) => (
        <span className="flex flex-wrap items-center gap-1.5">
          <span className="break-all">{l.model_name || '-'}</span>
          <CacheHitBadge log={l} />
        </span>
      ),
    },
    token: { head: t('logs:columns.token'), render: (l) => l.token_name || '-' },
    group: { head: t('logs:columns.group'), render: (l) => l.group || '-' },
    promptTokens: { head: t('logs:columns.promptTokens'), right: true, render: (l) => renderNumber(l.prompt_tokens) },
    completionTokens: { head: t('logs:columns.completionTokens'), right: true, render: (l) => renderNumber(l.completion_tokens) },
    quota: {
      head: t('logs:columns.quota'),
      right: true,
      render: (l) => (
        <span className="whitespace-nowrap" data-testid="log-quota">
          {money(l.quota)}
        </span>
      ),
    },
    duration: { head: t('logs:columns.duration'), right: true, render: duration },
    ip: { head: t('logs:columns.ip'), render: (l) => <span className="font-mono text-xs">{l.source_ip || '-'}</span> },
    detail: {
      head: t('logs:columns.detail'),
      render: (l) => (
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
  }
  const columns = columnsFor(scope).filter(shown)

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
      <Card>
        <CardContent className="p-4">
          <form
            onSubmit={onSearch}
            aria-label={t('logs:filters.label')}
            className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4"
            data-testid="log-filters"
          >
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-type`}>{t('logs:filters.type')}</Label>
              <NativeSelect id={`${id}-type`} value={draft.type} onChange={set('type')} data-testid="log-filter-type">
                {LOG_TYPES.map((x) => (
                  <option key={x.value} value={x.value}>
                    {t(`logs:types.${x.key}`)}
                  </option>
                ))}
              </NativeSelect>
            </div>
            {field('model_name', t('logs:filters.modelName'), 'text', t('logs:filters.prefixHint'))}
            {field('token_name', t('logs:filters.tokenName'), 'text', t('logs:filters.prefixHint'))}
            {field('group', t('logs:filters.group'))}
            {field('source_ip', t('logs:filters.sourceIp'))}
            {admin && field('username', t('logs:filters.username'))}
            {admin && field('channel', t('logs:filters.channel'))}
            {field('start', t('logs:filters.start'), 'datetime-local')}
            {field('end', t('logs:filters.end'), 'datetime-local')}
            <div className="flex items-end gap-2">
              <Button type="submit" data-testid="log-search">
                <SearchIcon />
                {t('common:actions.search')}
              </Button>
              <Button type="button" variant="outline" onClick={onReset} data-testid="log-reset">
                <RotateCcwIcon />
                {t('common:actions.reset')}
              </Button>
            </div>
          </form>
        </CardContent>
      </Card>

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

      <Card>
        <div className="flex items-center justify-end border-b px-3 py-2">
          <DropdownMenu>
            <DropdownMenuTrigger asChild>
              <Button variant="ghost" size="sm" data-testid="log-columns">
                <Columns3Icon />
                {t('logs:columnSettings.open')}
              </Button>
            </DropdownMenuTrigger>
            <DropdownMenuContent align="end">
              <DropdownMenuLabel>{t('logs:columnSettings.title')}</DropdownMenuLabel>
              {columnsFor(scope).map((c) => (
                <DropdownMenuCheckboxItem
                  key={c}
                  checked={shown(c)}
                  disabled={ESSENTIAL.has(c)}
                  onCheckedChange={(on) => toggleColumn(c, on === true)}
                  onSelect={(e) => e.preventDefault()}
                  data-testid={`log-column-${c}`}
                >
                  {cell[c].head}
                </DropdownMenuCheckboxItem>
              ))}
              <DropdownMenuSeparator />
              <DropdownMenuItem onSelect={() => setVisible(resetVisible(scope))} data-testid="log-columns-reset">
                {t('logs:columnSettings.reset')}
              </DropdownMenuItem>
            </DropdownMenuContent>
          </DropdownMenu>
        </div>
        <CardContent className="p-0">
          <ListState
            loading={logs.isPending}
            empty={rows.length === 0}
            emptyText={t('logs:empty')}
            emptyTestId="logs-empty"
            query={logs}
          >
            {isPhone ? (
              <ul className="divide-y" data-testid="logs-cards">
                {rows.map((l) => (
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
                ))}
              </ul>
            ) : (
              <Table data-testid="logs-table">
                <TableHeader>
                  <TableRow>
                    {columns.map((c) => (
                      <TableHead key={c} className={cell[c].right ? 'text-right' : undefined}>
                        {cell[c].head}
                      </TableHead>
                    ))}
                  </TableRow>
                </TableHeader>
                <TableBody>
                  {rows.map((l) => (
                    <TableRow key={l.id} data-testid={`log-row-${l.id}`} className={l.type === 5 ? 'bg-red-50/60 dark:bg-red-950/20' : undefined}>
                      {columns.map((c) => (
                        <TableCell key={c} className={cell[c].right ? 'text-right tabular-nums' : undefined}>
                          {cell[c].render(l)}
                        </TableCell>
                      ))}
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            )}
          </ListState>
        </CardContent>
      </Card>

      {total > 0 && (
        <DataPagination
          page={page}
          size={size}
          total={total}
          onPageChange={(p) => go({ ...params, page: p })}
          onSizeChange={(s) => go({ ...params, size: s, page: 1 })}
        />
      )}

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
