import { CopyIcon, Trash2Icon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { FilterBar, SearchInput } from '@/components/filter-bar'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction, flipStatus, RowAction, TitleCell, ToggleAction } from '@/components/list-kit'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { NativeSelect } from '@/components/ui/native-select'
import { useListScreen } from '@/hooks/use-list-screen'
import { copyText } from '@/lib/clipboard'
import { formatTimestamp, renderQuota } from '@/lib/format'
import { notify, notifyCopied } from '@/lib/toast'
import { useQuotaDisplay } from '@/stores/site'
import { useDeleteInvalidRedemptions, useDeleteRedemption } from '../api/delete-redemption'
import { useRedemptions } from '../api/get-redemptions'
import { useUpdateRedemption } from '../api/update-redemption'
import { REDEMPTION_STATUS, type Redemption } from '../types'
import { RedemptionCodesDialog } from './redemption-codes-dialog'
import { RedemptionFormDialog } from './redemption-form-dialog'

const STATUS: Record<number, { key: 'enabled' | 'disabled' | 'used'; variant: BadgeVariant }> = {
  [REDEMPTION_STATUS.enabled]: { key: 'enabled', variant: 'success' },
  [REDEMPTION_STATUS.disabled]: { key: 'disabled', variant: 'secondary' },
  [REDEMPTION_STATUS.used]: { key: 'used', variant: 'outline' },
}

const FILTERS = { keyword: '', status: 0 }

/** Redemption codes: search, status filter, paging, batch create, edit, enable/disable, delete. */
export function RedemptionsPanel() {
  const { t } = useTranslation()
  const display = useQuotaDisplay()
  const list = useListScreen<Redemption, typeof FILTERS>({ filters: FILTERS })
  const redemptions = useRedemptions(list.params)
  const rows = redemptions.data?.data ?? []

  const [created, setCreated] = useState<string[] | null>(null)
  const [purging, setPurging] = useState(false)
  const updateMutation = useUpdateRedemption()
  const deleteMutation = useDeleteRedemption()
  const purgeMutation = useDeleteInvalidRedemptions()

  const copyCode = async (r: Redemption) => {
    if (await copyText(r.code)) notifyCopied(r.code, 'redemption-code.txt')
    else setCreated([r.code])
  }

  const toggleStatus = (r: Redemption) =>
    flipStatus(updateMutation, r, REDEMPTION_STATUS, { enabled: t('redemptions:toast.enabled'), disabled: t('redemptions:toast.disabled') })

  const confirmPurge = () => {
    purgeMutation.mutate(undefined, {
      onSuccess: ({ deleted }) => {
        notify.success(t('redemptions:toast.purged', { count: deleted }))
        setPurging(false)
        list.setPage(1)
      },
    })
  }

  const columns: Column<Redemption>[] = [
    { id: 'id', header: t('redemptions:columns.id'), cellClassName: 'tabular-nums', cell: (r) => r.id },
    {
      id: 'name',
      header: t('redemptions:columns.name'),
      card: 'title',
      essential: true,
      cell: (r) => (
        <TitleCell text={r.name} testId="redemption-name" sub={r.code} subTitle={r.code} subClassName="max-w-48 truncate font-mono text-xs text-muted-foreground" />
      ),
    },
    {
      id: 'status',
      header: t('redemptions:columns.status'),
      cell: (r) => {
        const s = STATUS[r.status]
        return (
          <Badge variant={s?.variant ?? 'outline'} data-testid="redemption-status">
            {s ? t(`redemptions:status.${s.key}`) : t('redemptions:status.unknown')}
          </Badge>
        )
      },
    },
    { id: 'quota', header: t('redemptions:columns.quota'), testId: 'redemption-quota', cell: (r) => renderQuota(r.quota, display) },
    { id: 'created', header: t('redemptions:columns.createdAt'), className: 'whitespace-nowrap', cell: (r) => formatTimestamp(r.created_at) },
    {
      id: 'redeemed',
      header: t('redemptions:columns.redeemedAt'),
      className: 'whitespace-nowrap',
      cell: (r) => (r.redeemed_at ? formatTimestamp(r.redeemed_at) : t('redemptions:notRedeemed')),
    },
    actionsColumn(t('redemptions:columns.actions'), (r) => (
      <>
        <RowAction label={t('redemptions:actions.copy')} onClick={() => void copyCode(r)} testId="redemption-copy">
          <CopyIcon />
        </RowAction>
        {r.status !== REDEMPTION_STATUS.used && (
          <>
            <EditAction onClick={() => list.form.edit(r)} testId="redemption-edit" />
            <ToggleAction
              enabled={r.status === REDEMPTION_STATUS.enabled}
              onClick={() => toggleStatus(r)}
              disabled={updateMutation.isPending}
              testId="redemption-toggle"
            />
          </>
        )}
        <DeleteAction onClick={() => list.setDeleting(r)} testId="redemption-delete" />
      </>
    )),
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        onSearch={list.search}
        className="flex w-full flex-wrap gap-2 sm:w-auto sm:flex-1 sm:flex-nowrap lg:max-w-2xl"
        actions={
          <>
            <Button variant="outline" onClick={() => setPurging(true)} data-testid="redemption-purge">
              <Trash2Icon />
              {t('redemptions:purge.button')}
            </Button>
            <CreateButton label={t('redemptions:create')} onClick={list.form.create} testId="redemption-create" />
          </>
        }
      >
        <SearchInput
          {...list.bind('keyword')}
          placeholder={t('redemptions:search.placeholder')}
          className="w-full sm:w-auto sm:min-w-40 sm:flex-1"
          data-testid="redemption-search"
        />
        <NativeSelect
          value={list.filters.status}
          onChange={(e) => list.setFilters({ status: Number(e.target.value) })}
          aria-label={t('redemptions:columns.status')}
          className="flex-1 sm:w-32 sm:flex-none"
          data-testid="redemption-status-filter"
        >
          <option value={0}>{t('redemptions:status.all')}</option>
          <option value={REDEMPTION_STATUS.enabled}>{t('redemptions:status.enabled')}</option>
          <option value={REDEMPTION_STATUS.disabled}>{t('redemptions:status.disabled')}</option>
          <option value={REDEMPTION_STATUS.used}>{t('redemptions:status.used')}</option>
        </NativeSelect>
      </FilterBar>

      <DataTable
        name="redemption"
        columns={columns}
        query={redemptions}
        list={list}
        settings
        emptyText={list.filtered ? t('redemptions:noMatch') : t('redemptions:empty')}
      />

      <RedemptionFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} redemption={list.form.editing} onCreated={setCreated} />
      <RedemptionCodesDialog codes={created} onClose={() => setCreated(null)} />
      <ConfirmDialog
        {...list.deleteDialog}
        title={t('redemptions:delete.title')}
        description={t('redemptions:delete.description', { name: list.deleting?.name ?? '' })}
        onConfirm={list.confirmDelete((r, done) => deleteMutation.mutate(r.id, done), t('redemptions:toast.deleted'), rows.length)}
        pending={deleteMutation.isPending}
        testId="redemption-delete-dialog"
      />
      <ConfirmDialog
        open={purging}
        onOpenChange={setPurging}
        title={t('redemptions:purge.title')}
        description={t('redemptions:purge.description')}
        onConfirm={confirmPurge}
        pending={purgeMutation.isPending}
        testId="redemption-purge-dialog"
      />
    </div>
  )
}
