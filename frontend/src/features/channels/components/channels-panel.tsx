import {
  ActivityIcon,
  ChevronDownIcon,
  CopyPlusIcon,
  CloudIcon,
  EraserIcon,
  LayersIcon,
  EllipsisIcon,
  PencilIcon,
  PlusIcon,
  PowerIcon,
  PowerOffIcon,
  RefreshCwIcon,
  RotateCcwIcon,
  SearchIcon,
  TagsIcon,
  Trash2Icon,
  ZapIcon,
} from 'lucide-react'
import { useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { DropdownMenu, DropdownMenuContent, DropdownMenuItem, DropdownMenuTrigger } from '@/components/ui/dropdown-menu'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { errorText } from '@/lib/errors'
import { formatDuration, formatTimestamp, renderQuota } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
import { useCopyChannel } from '../api/copy-channel'
import { useBatchDeleteChannels, useDeleteChannel, useDeleteDisabledChannels } from '../api/delete-channels'
import { useChannels } from '../api/get-channels'
import { useChannelHealth } from '../api/get-health'
import type { ChannelFilters, ChannelListParams } from '../api/keys'
import { useSetChannelStatus } from '../api/set-channel-status'
import { useTestAllChannels, useTestChannel } from '../api/test-channels'
import { useUpdateBalance } from '../api/update-balance'
import {
  CHANNEL_STATUS,
  CHANNEL_TYPES,
  channelTypeName,
  type Channel,
  type ChannelHealthPair,
  type TestAllSummary,
  type TestOutcome,
} from '../types'
import { BatchEditDialog, type BatchEditMode } from './batch-edit-dialog'
import { ChannelFormDialog } from './channel-form-dialog'
import { TagsDialog } from './tags-dialog'

const STATUS: Record<number, { key: 'enabled' | 'disabled' | 'autoDisabled'; variant: BadgeVariant }> = {
  [CHANNEL_STATUS.enabled]: { key: 'enabled', variant: 'success' },
  [CHANNEL_STATUS.disabled]: { key: 'disabled', variant: 'secondary' },
  [CHANNEL_STATUS.autoDisabled]: { key: 'autoDisabled', variant: 'warning' },
}

const ORDERS = ['-id', 'id', '-priority', '-weight', 'response_time', '-balance', '-used_quota', 'name'] as const
type OrderKey = 'idDesc' | 'idAsc' | 'priorityDesc' | 'weightDesc' | 'responseAsc' | 'balanceDesc' | 'usedDesc' | 'nameAsc'
const ORDER_KEYS: Record<(typeof ORDERS)[number], OrderKey> = {
  '-id': 'idDesc',
  id: 'idAsc',
  '-priority': 'priorityDesc',
  '-weight': 'weightDesc',
  response_time: 'responseAsc',
  '-balance': 'balanceDesc',
  '-used_quota': 'usedDesc',
  name: 'nameAsc',
}

const EMPTY: ChannelFilters = { keyword: '', type: 0, status: 0, group: '', tag: '', model: '', order: '-id' }

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

/** Channels: filters, ordering, paging, selection, tests, balances, create/edit, copy, batch edits, delete. */
export function ChannelsPanel() {
  const { t } = useTranslation()
  const id = useId()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }

  const [draft, setDraft] = useState<ChannelFilters>(EMPTY)
  const [params, setParams] = useState<ChannelListParams>({ ...EMPTY, page: 1, size: 10 })
  const channels = useChannels(params)
  // Channels with a circuit breaker open or probing on the node that answered.
  const heldOut = useChannelHealth().data
  const [selected, setSelected] = useState<Set<number>>(new Set())

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<Channel | undefined>()
  const [tagsOpen, setTagsOpen] = useState(false)
  const [deleting, setDeleting] = useState<Channel | null>(null)
  const [confirm, setConfirm] = useState<'batch' | 'disabled' | null>(null)
  const [testingId, setTestingId] = useState<number | null>(null)
  // Test results since the page was opened, by channel: a failure shows as such, with its reason.
  const [outcomes, setOutcomes] = useState<Record<number, TestOutcome>>({})
  const [testAllResult, setTestAllResult] = useState<TestAllSummary | null>(null)
  const [balanceId, setBalanceId] = useState<number | null>(null)
  const [batchMode, setBatchMode] = useState<BatchEditMode | null>(null)

  const statusMutation = useSetChannelStatus()
  const deleteMutation = useDeleteChannel()
  const batchMutation = useBatchDeleteChannels()
  const disabledMutation = useDeleteDisabledChannels()
  const testMutation = useTestChannel()
  const testAllMutation = useTestAllChannels()
  const balanceMutation = useUpdateBalance()
  const copyMutation = useCopyChannel()

  const rows = channels.data?.data ?? []
  const total = channels.data?.total_count ?? 0
  const filtered = Object.entries(EMPTY).some(
    ([k, v]) => k !== 'order' && params[k as keyof ChannelFilters] !== v,
  )

  const set = (key: keyof ChannelFilters) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [key]: key === 'type' || key === 'status' ? Number(e.target.value) : e.target.value }))
  const apply = (filters: ChannelFilters) => {
    setParams((p) => ({ ...p, ...filters, page: 1 }))
    setSelected(new Set())
  }
  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    apply({
      ...draft,
      keyword: draft.keyword.trim(),
      group: draft.group.trim(),
      tag: draft.tag.trim(),
      model: draft.model.trim(),
    })
  }
  const onReset = () => {
    setDraft(EMPTY)
    apply(EMPTY)
  }
  const filterByTag = (tag: string) => {
    setDraft((d) => ({ ...d, tag }))
    apply({ ...params, tag })
  }

  const toggleRow = (channelId: number) =>
    setSelected((s) => {
      const next = new Set(s)
      if (!next.delete(channelId)) next.add(channelId)
      return next
    })
  const allOnPage = rows.length > 0 && rows.every((c) => selected.has(c.id))
  const togglePage = () => setSelected(allOnPage ? new Set() : new Set(rows.map((c) => c.id)))

  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (c: Channel) => {
    setEditing(c)
    setFormOpen(true)
  }

  const toggleStatus = (c: Channel) => {
    const status = c.status === CHANNEL_STATUS.enabled ? CHANNEL_STATUS.disabled : CHANNEL_STATUS.enabled
    statusMutation.mutate(
      { id: c.id, status },
      {
        onSuccess: () =>
          notify.success(status === CHANNEL_STATUS.enabled ? t('channels:toast.enabled') : t('channels:toast.disabled')),
      },
    )
  }

  const test = (c: Channel) => {
    if (!c.test_model.trim()) {
      notify.warning(t('channels:toast.testModelRequired'))
      return
    }
    setTestingId(c.id)
    testMutation.mutate(
      { id: c.id },
      {
        onSuccess: (r) => {
          setOutcomes((o) => ({ ...o, [c.id]: { ok: true, ms: r.time_ms } }))
          notify.success(t('channels:toast.tested', { name: c.name, model: r.model, time: formatDuration(r.time_ms) }))
        },
        onError: (e) => setOutcomes((o) => ({ ...o, [c.id]: { ok: false, message: errorText(e) } })),
        onSettled: () => setTestingId(null),
      },
    )
  }

  // All passed: a toast. Any failed: a dialog that names them, with the reasons.
  const testAll = () =>
    testAllMutation.mutate(undefined, {
      onSuccess: (s) => {
        const failures = s.failures ?? []
        setOutcomes((o) => {
          const next = { ...o }
          for (const f of failures) next[f.id] = { ok: false, message: f.message }
          return next
        })
        if (s.failed > 0) setTestAllResult(s)
        else notify.success(t('channels:toast.testedAll', { ...s }))
      },
    })

  const copy = (c: Channel) =>
    copyMutation.mutate(c.id, { onSuccess: ({ id: newId }) => notify.success(t('channels:toast.copied', { name: c.name, id: newId })) })

  const updateBalance = (c: Channel) => {
    setBalanceId(c.id)
    balanceMutation.mutate(c.id, {
      onSuccess: ({ balance }) => notify.success(t('channels:toast.balance', { name: c.name, balance: balance.toFixed(2) })),
      onSettled: () => setBalanceId(null),
    })
  }

  const afterDelete = (count: number) => {
    if (params.page > 1 && count >= rows.length) setParams((p) => ({ ...p, page: p.page - 1 }))
    setSelected(new Set())
  }
  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting.id, {
      onSuccess: () => {
        notify.success(t('channels:toast.deleted'))
        setDeleting(null)
        afterDelete(1)
      },
    })
  }
  const confirmBulk = () => {
    const onSuccess = ({ deleted }: { deleted: number }) => {
      notify.success(t('channels:toast.deletedMany', { count: deleted }))
      setConfirm(null)
      afterDelete(deleted)
    }
    if (confirm === 'batch') batchMutation.mutate([...selected], { onSuccess })
    else disabledMutation.mutate(undefined, { onSuccess })
  }

  const textFilter = (key: 'keyword' | 'group' | 'tag' | 'model', label: string, placeholder?: string) => (
    <div className={key === 'keyword' ? 'col-span-2 grid gap-1.5 lg:col-span-1' : 'grid gap-1.5'}>
      <Label htmlFor={`${id}-${key}`}>{label}</Label>
      <Input
        id={`${id}-${key}`}
        value={draft[key]}
        onChange={set(key)}
        placeholder={placeholder}
        data-testid={`channel-filter-${key}`}
      />
    </div>
  )

  return (
    <div className="grid grid-cols-1 gap-4">
      <Card>
        <CardContent className="p-4">
          <form
            onSubmit={onSearch}
            aria-label={t('channels:filters.label')}
            className="grid grid-cols-2 gap-3 lg:grid-cols-4"
            data-testid="channel-filters"
          >
            {textFilter('keyword', t('channels:filters.keyword'), t('channels:filters.keywordPlaceholder'))}
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-type`}>{t('channels:filters.type')}</Label>
              <NativeSelect id={`${id}-type`} value={draft.type} onChange={set('type')} data-testid="channel-filter-type">
                <option value={0}>{t('channels:filters.any')}</option>
                {CHANNEL_TYPES.map((x) => (
                  <option key={x.id} value={x.id}>
                    {x.name}
                  </option>
                ))}
              </NativeSelect>
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-status`}>{t('channels:filters.status')}</Label>
              <NativeSelect id={`${id}-status`} value={draft.status} onChange={set('status')} data-testid="channel-filter-status">
                <option value={0}>{t('channels:filters.any')}</option>
                <option value={CHANNEL_STATUS.enabled}>{t('channels:status.enabled')}</option>
                <option value={CHANNEL_STATUS.disabled}>{t('channels:status.disabled')}</option>
                <option value={CHANNEL_STATUS.autoDisabled}>{t('channels:status.autoDisabled')}</option>
              </NativeSelect>
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-order`}>{t('channels:filters.order')}</Label>
              <NativeSelect id={`${id}-order`} value={draft.order} onChange={set('order')} data-testid="channel-filter-order">
                {ORDERS.map((o) => (
                  <option key={o} value={o}>
                    {t(`channels:order.${ORDER_KEYS[o]}`)}
                  </option>
                ))}
              </NativeSelect>
            </div>
            {textFilter('group', t('channels:filters.group'))}
            {textFilter('tag', t('channels:filters.tag'))}
            {textFilter('model', t('channels:filters.model'))}
            <div className="flex items-end gap-2 max-lg:col-span-2">
              <Button type="submit" data-testid="channel-search">
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

      <div className="flex flex-wrap items-center gap-2">
        <Button onClick={openCreate} data-testid="channel-create">
          <PlusIcon />
          {t('channels:create')}
        </Button>
        <Button variant="outline" onClick={testAll} disabled={testAllMutation.isPending} data-testid="channel-test-all">
          {testAllMutation.isPending ? <Spinner /> : <ZapIcon />}
          {testAllMutation.isPending ? t('channels:actions.testingAll') : t('channels:actions.testAll')}
        </Button>
        <Button variant="outline" onClick={() => setTagsOpen(true)} data-testid="channel-tags">
          <TagsIcon />
          {t('channels:actions.tags')}
        </Button>
        <Button variant="outline" onClick={() => setConfirm('disabled')} data-testid="channel-delete-disabled">
          <Trash2Icon />
          {t('channels:actions.deleteDisabled')}
        </Button>
        <DropdownMenu>
          <DropdownMenuTrigger asChild>
            <Button variant="outline" data-testid="channel-batch">
              <LayersIcon />
              {t('channels:actions.batch')}
              <ChevronDownIcon />
            </Button>
          </DropdownMenuTrigger>
          <DropdownMenuContent align="start">
            <DropdownMenuItem onSelect={() => setBatchMode('azure')} data-testid="channel-batch-azure">
              <CloudIcon />
              {t('channels:actions.azureApi')}
            </DropdownMenuItem>
            <DropdownMenuItem onSelect={() => setBatchMode('model')} data-testid="channel-batch-model">
              <EraserIcon />
              {t('channels:actions.removeModel')}
            </DropdownMenuItem>
          </DropdownMenuContent>
        </DropdownMenu>
        {selected.size > 0 && (
          <Button variant="destructive" onClick={() => setConfirm('batch')} data-testid="channel-batch-delete">
            <Trash2Icon />
            {t('channels:actions.batchDelete', { count: selected.size })}
          </Button>
        )}
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={channels.isPending} query={channels}
            empty={rows.length === 0}
            emptyText={filtered ? t('channels:noMatch') : t('channels:empty')}
            emptyTestId="channels-empty"
          >
            <Table cards data-testid="channels-table">
              <TableHeader>
                <TableRow>
                  <TableHead data-card="hide" className="w-8">
                    <input
                      type="checkbox"
                      className="size-4 accent-primary"
                      checked={allOnPage}
                      onChange={togglePage}
                      aria-label={t('channels:selectPage')}
                      data-testid="channel-select-page"
                    />
                  </TableHead>
                  <TableHead>{t('channels:columns.id')}</TableHead>
                  <TableHead>{t('channels:columns.name')}</TableHead>
                  <TableHead>{t('channels:columns.type')}</TableHead>
                  <TableHead>{t('channels:columns.status')}</TableHead>
                  <TableHead>{t('channels:columns.group')}</TableHead>
                  <TableHead>{t('channels:columns.responseTime')}</TableHead>
                  <TableHead>{t('channels:columns.usedBalance')}</TableHead>
                  <TableHead className="text-right">{t('channels:columns.priorityWeight')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('channels:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((c) => {
                  const s = STATUS[c.status]
                  const enabled = c.status === CHANNEL_STATUS.enabled
                  return (
                    <TableRow key={c.id} data-testid={`channel-row-${c.id}`} data-state={selected.has(c.id) ? 'selected' : undefined}>
                      <TableCell data-card="hide">
                        <input
                          type="checkbox"
                          className="size-4 accent-primary"
                          checked={selected.has(c.id)}
                          onChange={() => toggleRow(c.id)}
                          aria-label={t('channels:selectRow', { name: c.name })}
                          data-testid="channel-select"
                        />
                      </TableCell>
                      <TableCell className="tabular-nums">{c.id}</TableCell>
                      <TableCell data-card="title">
                        <div className="font-medium whitespace-nowrap" data-testid="channel-name">
                          {c.name}
                        </div>
                        {c.tag && (
                          <button
                            type="button"
                            className="text-xs text-muted-foreground underline-offset-2 hover:underline"
                            onClick={() => filterByTag(c.tag)}
                            title={t('channels:filterByTag')}
                          >
                            #{c.tag}
                          </button>
                        )}
                      </TableCell>
                      <TableCell className="whitespace-nowrap">{channelTypeName(c.type)}</TableCell>
                      <TableCell>
                        <Badge variant={s?.variant ?? 'outline'} data-testid="channel-status">
                          {s ? t(`channels:status.${s.key}`) : t('channels:status.unknown')}
                        </Badge>
                        <BreakerBadge pairs={heldOut?.get(c.id)} />
                      </TableCell>
                      <TableCell>
                        <div className="flex max-w-40 flex-wrap gap-1">
                          {c.group.split(',').filter(Boolean).map((g) => (
                            <Badge key={g} variant="outline">
                              {g}
                            </Badge>
                          ))}
                        </div>
                      </TableCell>
                      <TableCell data-testid="channel-response">
                        <ResponseTime channel={c} outcome={outcomes[c.id]} testing={testingId === c.id} />
                      </TableCell>
                      <TableCell className="whitespace-nowrap">
                        <div className="px-2 tabular-nums" data-testid="channel-used">
                          {renderQuota(c.used_quota, display)}
                        </div>
                        <Button
                          variant="ghost"
                          size="sm"
                          className="h-6 px-2 text-xs text-muted-foreground tabular-nums"
                          onClick={() => updateBalance(c)}
                          disabled={balanceId === c.id}
                          title={t('channels:actions.updateBalance')}
                          data-testid="channel-balance"
                        >
                          {balanceId === c.id ? <Spinner /> : <RefreshCwIcon />}
                          {c.balance_updated_at ? `$${(c.balance / 1_000_000).toFixed(2)}` : t('channels:balanceUnknown')}
                        </Button>
                      </TableCell>
                      <TableCell className="text-right whitespace-nowrap tabular-nums" data-testid="channel-priority-weight">
                        {c.priority} / {c.weight}
                      </TableCell>
                      <TableCell data-card="actions">
                        <div className="flex justify-end gap-1">
                          <RowAction
                            label={t('channels:actions.test')}
                            onClick={() => test(c)}
                            disabled={testingId === c.id}
                            testId="channel-test"
                          >
                            {testingId === c.id ? <Spinner /> : <ActivityIcon />}
                          </RowAction>
                          <RowAction label={t('common:actions.edit')} onClick={() => openEdit(c)} testId="channel-edit">
                            <PencilIcon />
                          </RowAction>
                          <RowAction
                            label={enabled ? t('common:actions.disable') : t('common:actions.enable')}
                            onClick={() => toggleStatus(c)}
                            disabled={statusMutation.isPending}
                            testId="channel-toggle"
                          >
                            {enabled ? <PowerOffIcon /> : <PowerIcon />}
                          </RowAction>
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
                              <DropdownMenuItem
                                onSelect={() => copy(c)}
                                disabled={copyMutation.isPending}
                                data-testid="channel-copy"
                              >
                                <CopyPlusIcon />
                                {t('channels:actions.copy')}
                              </DropdownMenuItem>
                              <DropdownMenuItem
                                onSelect={() => setDeleting(c)}
                                className="text-destructive focus:text-destructive"
                                data-testid="channel-delete"
                              >
                                <Trash2Icon />
                                {t('common:actions.delete')}
                              </DropdownMenuItem>
                            </DropdownMenuContent>
                          </DropdownMenu>
                        </div>
                      </TableCell>
                    </TableRow>
                  )
                })}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>

      {total > 0 && (
        <DataPagination
          page={params.page}
          size={params.size}
          total={total}
          onPageChange={(page) => {
            setParams((p) => ({ ...p, page }))
            setSelected(new Set())
          }}
          onSizeChange={(size) => {
            setParams((p) => ({ ...p, size, page: 1 }))
            setSelected(new Set())
          }}
        />
      )}

      <BatchEditDialog key={batchMode ?? 'closed'} mode={batchMode} onClose={() => setBatchMode(null)} ids={[...selected]} />
      <ChannelFormDialog open={formOpen} onOpenChange={setFormOpen} channel={editing} />
      <TagsDialog open={tagsOpen} onOpenChange={setTagsOpen} onShowTag={(tag) => {
        setTagsOpen(false)
        filterByTag(tag)
      }} />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('channels:delete.title')}
        description={t('channels:delete.description', { name: deleting?.name ?? '' })}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="channel-delete-dialog"
      />
      <ConfirmDialog
        open={confirm !== null}
        onOpenChange={(open) => !open && setConfirm(null)}
        title={confirm === 'batch' ? t('channels:batchDelete.title') : t('channels:deleteDisabled.title')}
        description={
          confirm === 'batch'
            ? t('channels:batchDelete.description', { count: selected.size })
            : t('channels:deleteDisabled.description')
        }
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmBulk}
        pending={batchMutation.isPending || disabledMutation.isPending}
        testId="channel-bulk-dialog"
      />
      <Dialog open={testAllResult !== null} onOpenChange={(open) => !open && setTestAllResult(null)}>
        <DialogContent closeLabel={t('common:actions.close')} data-testid="channel-test-all-result">
          <DialogHeader>
            <DialogTitle>{t('channels:testAll.title', { failed: testAllResult?.failed ?? 0, tested: testAllResult?.tested ?? 0 })}</DialogTitle>
            <DialogDescription>{testAllResult && t('channels:toast.testedAll', { ...testAllResult })}</DialogDescription>
          </DialogHeader>
          <ul className="grid max-h-80 gap-2 overflow-y-auto text-sm">
            {(testAllResult?.failures ?? []).map((f) => (
              <li key={f.id} className="rounded-md border p-2" data-testid="channel-test-failure">
                <p className="font-medium">{`#${f.id} ${f.name}`}</p>
                <p className="break-words text-muted-foreground">{f.message}</p>
              </li>
            ))}
          </ul>
        </DialogContent>
      </Dialog>
    </div>
  )
}
