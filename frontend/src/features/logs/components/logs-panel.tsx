import { RotateCcwIcon, SearchIcon } from 'lucide-react'
import { useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import { LOG_TYPE } from '@/types/api'
import { useLogs } from '../api/get-logs'
import type { LogFilters, LogScope } from '../api/keys'

type TypeKey = 'all' | 'recharge' | 'consume' | 'manage' | 'system'
const TYPES: { value: number; key: TypeKey; variant: BadgeVariant }[] = [
  { value: LOG_TYPE.all, key: 'all', variant: 'outline' },
  { value: LOG_TYPE.recharge, key: 'recharge', variant: 'success' },
  { value: LOG_TYPE.consume, key: 'consume', variant: 'default' },
  { value: LOG_TYPE.manage, key: 'manage', variant: 'warning' },
  { value: LOG_TYPE.system, key: 'system', variant: 'secondary' },
]

/** Form state: times as datetime-local text. */
interface FilterDraft {
  type: string
  model_name: string
  token_name: string
  start: string
  end: string
  username: string
  channel: string
}

const EMPTY_DRAFT: FilterDraft = { type: '0', model_name: '', token_name: '', start: '', end: '', username: '', channel: '' }

const toUnix = (v: string) => (v ? Math.floor(new Date(v).getTime() / 1000) || 0 : 0)

function toFilters(d: FilterDraft): LogFilters {
  return {
    type: Number(d.type) || 0,
    model_name: d.model_name.trim(),
    token_name: d.token_name.trim(),
    start_timestamp: toUnix(d.start),
    end_timestamp: toUnix(d.end),
    username: d.username.trim(),
    channel: d.channel.trim(),
  }
}

/** Logs with filters and paging; administrators see everyone's (GET /api/log) and more filters. */
export function LogsPanel({ admin }: { admin: boolean }) {
  const { t } = useTranslation()
  const id = useId()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const scope: LogScope = admin ? 'all' : 'self'

  const [draft, setDraft] = useState<FilterDraft>(EMPTY_DRAFT)
  const [filters, setFilters] = useState<LogFilters>(() => toFilters(EMPTY_DRAFT))
  const [paging, setPaging] = useState({ page: 1, size: 10 })
  const logs = useLogs(scope, { ...filters, ...paging })

  const set = (key: keyof FilterDraft) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [key]: e.target.value }))

  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    setFilters(toFilters(draft))
    setPaging((p) => ({ ...p, page: 1 }))
  }
  const onReset = () => {
    setDraft(EMPTY_DRAFT)
    setFilters(toFilters(EMPTY_DRAFT))
    setPaging((p) => ({ ...p, page: 1 }))
  }

  const typeOf = (value: number) => TYPES.find((x) => x.value === value && value !== 0)
  const rows = logs.data?.data ?? []
  const total = logs.data?.total_count ?? 0

  const field = (key: keyof FilterDraft, label: string, type = 'text') => (
    <div className="grid gap-1.5">
      <Label htmlFor={`${id}-${key}`}>{label}</Label>
      <Input id={`${id}-${key}`} type={type} value={draft[key]} onChange={set(key)} data-testid={`log-filter-${key}`} />
    </div>
  )

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
                {TYPES.map((x) => (
                  <option key={x.value} value={x.value}>
                    {t(`logs:types.${x.key}`)}
                  </option>
                ))}
              </NativeSelect>
            </div>
            {field('model_name', t('logs:filters.modelName'))}
            {field('token_name', t('logs:filters.tokenName'))}
            {admin && field('username', t('logs:filters.username'))}
            {admin && field('channel', t('logs:filters.channel'))}
            {field('start', t('logs:filters.start'), 'datetime-local')}
            {field('end', t('logs:filters.end'), 'datetime-local')}
            <div className="flex items-end gap-2">
              <Button type="submit" data-testid="log-search">
                <SearchIcon />
                {t('common:actions.search')}
              </Button>
              <Button type="button" variant="outline" onClick={onReset}>
                <RotateCcwIcon />
                {t('common:actions.reset')}
              </Button>
            </div>
          </form>
        </CardContent>
      </Card>

      <Card>
        <CardContent className="p-0">
          {logs.isPending ? (
            <div className="flex justify-center p-10" role="status" aria-label={t('common:state.loading')}>
              <Spinner className="size-6" />
            </div>
          ) : rows.length === 0 ? (
            <p className="p-10 text-center text-sm text-muted-foreground" data-testid="logs-empty">
              {t('logs:empty')}
            </p>
          ) : (
            <Table data-testid="logs-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('logs:columns.time')}</TableHead>
                  {admin && <TableHead>{t('logs:columns.user')}</TableHead>}
                  {admin && <TableHead>{t('logs:columns.channel')}</TableHead>}
                  <TableHead>{t('logs:columns.type')}</TableHead>
                  <TableHead>{t('logs:columns.model')}</TableHead>
                  <TableHead>{t('logs:columns.token')}</TableHead>
                  <TableHead className="text-right">{t('logs:columns.promptTokens')}</TableHead>
                  <TableHead className="text-right">{t('logs:columns.completionTokens')}</TableHead>
                  <TableHead className="text-right">{t('logs:columns.quota')}</TableHead>
                  <TableHead className="text-right">{t('logs:columns.duration')}</TableHead>
                  <TableHead>{t('logs:columns.detail')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((log) => {
                  const type = typeOf(log.type)
                  return (
                    <TableRow key={log.id} data-testid={`log-row-${log.id}`}>
                      <TableCell className="whitespace-nowrap">{formatTimestamp(log.created_at)}</TableCell>
                      {admin && <TableCell>{log.username || '-'}</TableCell>}
                      {admin && (
                        <TableCell>{log.channel_id ? `${log.channel_id} ${log.channel_name ?? ''}`.trim() : '-'}</TableCell>
                      )}
                      <TableCell>
                        <Badge variant={type?.variant ?? 'outline'} data-testid="log-type">
                          {type ? t(`logs:types.${type.key}`) : t('logs:types.unknown')}
                        </Badge>
                      </TableCell>
                      <TableCell>{log.model_name || '-'}</TableCell>
                      <TableCell>{log.token_name || '-'}</TableCell>
                      <TableCell className="text-right tabular-nums">{renderNumber(log.prompt_tokens)}</TableCell>
                      <TableCell className="text-right tabular-nums">{renderNumber(log.completion_tokens)}</TableCell>
                      <TableCell className="text-right tabular-nums" data-testid="log-quota">
                        {renderQuota(log.quota, display)}
                      </TableCell>
                      <TableCell className="text-right tabular-nums">{log.use_time_ms}</TableCell>
                      <TableCell className="max-w-sm min-w-48 text-xs break-words text-muted-foreground">
                        {log.content || '-'}
                      </TableCell>
                    </TableRow>
                  )
                })}
              </TableBody>
            </Table>
          )}
        </CardContent>
      </Card>

      {total > 0 && (
        <DataPagination
          page={paging.page}
          size={paging.size}
          total={total}
          onPageChange={(page) => setPaging((p) => ({ ...p, page }))}
          onSizeChange={(size) => setPaging({ size, page: 1 })}
        />
      )}
    </div>
  )
}
