import { ActivityIcon, CopyPlusIcon, EllipsisIcon, RefreshCwIcon, Trash2Icon } from 'lucide-react'
import type { Key } from 'react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, selectColumn, type Column } from '@/components/data-table'
import { EditAction, RowAction, ToggleAction } from '@/components/list-kit'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { DropdownMenu, DropdownMenuContent, DropdownMenuItem, DropdownMenuTrigger } from '@/components/ui/dropdown-menu'
import { Spinner } from '@/components/ui/spinner'
import { formatDuration, formatTimestamp, renderQuota } from '@/lib/format'
import { useQuotaDisplay } from '@/stores/site'
import { CHANNEL_STATUS, channelTypeName, type Channel, type ChannelHealthPair, type TestOutcome } from '../types'
import type { ChannelActions } from './use-channel-actions'

const STATUS: Record<number, { key: 'enabled' | 'disabled' | 'autoDisabled'; variant: BadgeVariant }> = {
  [CHANNEL_STATUS.enabled]: { key: 'enabled', variant: 'success' },
  [CHANNEL_STATUS.disabled]: { key: 'disabled', variant: 'secondary' },
  [CHANNEL_STATUS.autoDisabled]: { key: 'autoDisabled', variant: 'warning' },
}

/**
 * The last test: its time (ms under a second) coloured fast (< 1 s), slow (< 3 s) or very slow;
 * "failed" with the reason when a test run since the page was opened failed; "untested" only when
 * never tested.
 */
function ResponseTime({ channel, outcome, testing }: { channel: Channel; outcome?: TestOutcome; testing: boolean }) {
  const { t } = useTranslation()
  if (testing) {
    return (
      <Badge variant="outline" data-testid="channel-test-state">
        <Spinner className="size-3" />
        {t('channels:testing')}
      </Badge>
    )
  }
  if (outcome && !outcome.ok) {
    return (
      <Badge variant="destructive" title={outcome.message} className="max-w-48 whitespace-normal" data-testid="channel-test-state">
        {t('channels:testFailed')}
        <span className="sr-only">{outcome.message}</span>
      </Badge>
    )
  }
  const ms = outcome?.ok ? outcome.ms : channel.response_time
  if (!outcome && !channel.test_time) return <span className="text-muted-foreground" data-testid="channel-test-state">{t('channels:notTested')}</span>
  const variant: BadgeVariant = ms < 1000 ? 'success' : ms < 3000 ? 'warning' : 'destructive'
  return (
    <Badge variant={variant} title={channel.test_time ? formatTimestamp(channel.test_time) : undefined} data-testid="channel-test-state">
      {formatDuration(ms)}
    </Badge>
  )
}

/** A small mark on a channel whose circuit breaker holds it out for some models (open, or probing). */
function BreakerBadge({ pairs }: { pairs?: ChannelHealthPair[] }) {
  const { t } = useTranslation()
  if (!pairs?.length) return null
  const open = pairs.some((p) => p.state === 'open')
  const models = pairs.map((p) => p.model).join(', ')
  return (
    <Badge
      variant={open ? 'destructive' : 'warning'}
      className="ml-1"
      title={t('channels:breaker.models', { models })}
      data-testid="channel-breaker"
    >
      {open ? t('channels:breaker.open') : t('channels:breaker.halfOpen')}
      <span className="sr-only">{t('channels:breaker.models', { models })}</span>
    </Badge>
  )
}

/** A channel's copy and delete, behind "more". */
function MoreMenu({ onCopy, copying, onDelete }: { onCopy: () => void; copying: boolean; onDelete: () => void }) {
  const { t } = useTranslation()
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button
          variant="ghost"
          size="icon"
          className="size-8"
          aria-label={t('channels:actions.more')}
          title={t('channels:actions.more')}
          data-testid="channel-more"
        >
          <EllipsisIcon />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end">
        <DropdownMenuItem onSelect={onCopy} disabled={copying} data-testid="channel-copy">
          <CopyPlusIcon />
          {t('channels:actions.copy')}
        </DropdownMenuItem>
        <DropdownMenuItem onSelect={onDelete} className="text-destructive focus:text-destructive" data-testid="channel-delete">
          <Trash2Icon />
          {t('common:actions.delete')}
        </DropdownMenuItem>
      </DropdownMenuContent>
    </DropdownMenu>
  )
}

export interface ChannelColumnsContext {
  rows: readonly Channel[]
  selected: ReadonlySet<Key>
  onSelect: (ids: Set<Key>) => void
  /** Channels held out by a circuit breaker on the node that answered. */
  heldOut?: ReadonlyMap<number, ChannelHealthPair[]>
  actions: ChannelActions
  onTag: (tag: string) => void
  onEdit: (c: Channel) => void
  onDelete: (c: Channel) => void
}

/** The channels table's columns; headings sort by the orders the filter offers. */
export function useChannelColumns({ rows, selected, onSelect, heldOut, actions, onTag, onEdit, onDelete }: ChannelColumnsContext): Column<Channel>[] {
  const { t } = useTranslation()
  const display = useQuotaDisplay()
  return [
    selectColumn<Channel, Key>({
      selected,
      rows,
      keyOf: (c) => c.id,
      onChange: onSelect,
      allLabel: t('channels:selectPage'),
      rowLabel: (c) => t('channels:selectRow', { name: c.name }),
      testId: 'channel-select',
    }),
    { id: 'id', header: t('channels:columns.id'), cellClassName: 'tabular-nums', sortBy: ['-id', 'id'], cell: (c) => c.id },
    {
      id: 'name',
      header: t('channels:columns.name'),
      card: 'title',
      essential: true,
      sortBy: ['name'],
      cell: (c) => (
        <>
          <div className="font-medium whitespace-nowrap" data-testid="channel-name">
            {c.name}
          </div>
          {c.tag && (
            <button
              type="button"
              className="text-xs text-muted-foreground underline-offset-2 hover:underline"
              onClick={() => onTag(c.tag)}
              title={t('channels:filterByTag')}
            >
              #{c.tag}
            </button>
          )}
        </>
      ),
    },
    { id: 'type', header: t('channels:columns.type'), className: 'whitespace-nowrap', cell: (c) => channelTypeName(c.type) },
    {
      id: 'status',
      header: t('channels:columns.status'),
      cell: (c) => {
        const s = STATUS[c.status]
        return (
          <>
            <Badge variant={s?.variant ?? 'outline'} data-testid="channel-status">
              {s ? t(`channels:status.${s.key}`) : t('channels:status.unknown')}
            </Badge>
            <BreakerBadge pairs={heldOut?.get(c.id)} />
          </>
        )
      },
    },
    {
      id: 'group',
      header: t('channels:columns.group'),
      cell: (c) => (
        <div className="flex max-w-40 flex-wrap gap-1">
          {c.group
            .split(',')
            .filter(Boolean)
            .map((g) => (
              <Badge key={g} variant="outline">
                {g}
              </Badge>
            ))}
        </div>
      ),
    },
    {
      id: 'response',
      header: t('channels:columns.responseTime'),
      testId: 'channel-response',
      sortBy: ['response_time'],
      cell: (c) => <ResponseTime channel={c} outcome={actions.outcomes[c.id]} testing={actions.testingId === c.id} />,
    },
    {
      id: 'used',
      header: t('channels:columns.usedBalance'),
      className: 'whitespace-nowrap',
      sortBy: ['-used_quota', '-balance'],
      cell: (c) => (
        <div>
          <div className="px-2 tabular-nums" data-testid="channel-used">
            {renderQuota(c.used_quota, display)}
          </div>
          <Button
            variant="ghost"
            size="sm"
            className="h-6 px-2 text-xs text-muted-foreground tabular-nums"
            onClick={() => actions.updateBalance(c)}
            disabled={actions.balanceId === c.id}
            title={t('channels:actions.updateBalance')}
            data-testid="channel-balance"
          >
            {actions.balanceId === c.id ? <Spinner /> : <RefreshCwIcon />}
            {c.balance_updated_at ? `$${(c.balance / 1_000_000).toFixed(2)}` : t('channels:balanceUnknown')}
          </Button>
        </div>
      ),
    },
    {
      id: 'priorityWeight',
      header: t('channels:columns.priorityWeight'),
      right: true,
      className: 'whitespace-nowrap',
      cellClassName: 'tabular-nums',
      testId: 'channel-priority-weight',
      sortBy: ['-priority', '-weight'],
      cell: (c) => `${c.priority} / ${c.weight}`,
    },
    actionsColumn(t('channels:columns.actions'), (c) => (
      <>
        <RowAction label={t('channels:actions.test')} onClick={() => actions.test(c)} disabled={actions.testingId === c.id} testId="channel-test">
          {actions.testingId === c.id ? <Spinner /> : <ActivityIcon />}
        </RowAction>
        <EditAction onClick={() => onEdit(c)} testId="channel-edit" />
        <ToggleAction
          enabled={c.status === CHANNEL_STATUS.enabled}
          onClick={() => actions.toggleStatus(c)}
          disabled={actions.statusPending}
          testId="channel-toggle"
        />
        <MoreMenu onCopy={() => actions.copy(c)} copying={actions.copyPending} onDelete={() => onDelete(c)} />
      </>
    )),
  ]
}
