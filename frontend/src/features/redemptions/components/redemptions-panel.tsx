import { CopyIcon, PencilIcon, PlusIcon, PowerIcon, PowerOffIcon, SearchIcon, Trash2Icon } from 'lucide-react'
import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { copyText } from '@/lib/clipboard'
import { formatTimestamp, renderQuota } from '@/lib/format'
import { notify, notifyCopied } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
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

/** Redemption codes: search, status filter, paging, batch create, edit, enable/disable, delete. */
export function RedemptionsPanel() {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }

  const [params, setParams] = useState({ page: 1, size: 10, keyword: '', status: 0 })
  const [keywordInput, setKeywordInput] = useState('')
  const list = useRedemptions(params)

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<Redemption | undefined>()
  const [created, setCreated] = useState<string[] | null>(null)
  const [deleting, setDeleting] = useState<Redemption | null>(null)
  const [purging, setPurging] = useState(false)

  const updateMutation = useUpdateRedemption()
  const deleteMutation = useDeleteRedemption()
  const purgeMutation = useDeleteInvalidRedemptions()

  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    setParams((p) => ({ ...p, page: 1, keyword: keywordInput.trim() }))
  }

  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (r: Redemption) => {
    setEditing(r)
    setFormOpen(true)
  }

  const copyCode = async (r: Redemption) => {
    if (await copyText(r.code)) notifyCopied(r.code, 'redemption-code.txt')
    else setCreated([r.code])
  }

  const toggleStatus = (r: Redemption) => {
    const status = r.status === REDEMPTION_STATUS.enabled ? REDEMPTION_STATUS.disabled : REDEMPTION_STATUS.enabled
    updateMutation.mutate(
      { id: r.id, status },
      {
        onSuccess: () =>
          notify.success(
            status === REDEMPTION_STATUS.enabled ? t('redemptions:toast.enabled') : t('redemptions:toast.disabled'),
          ),
      },
    )
  }

  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting.id, {
      onSuccess: () => {
        notify.success(t('redemptions:toast.deleted'))
        setDeleting(null)
        if (params.page > 1 && list.data?.data.length === 1) setParams((p) => ({ ...p, page: p.page - 1 }))
      },
    })
  }

  const confirmPurge = () => {
    purgeMutation.mutate(undefined, {
      onSuccess: ({ deleted }) => {
        notify.success(t('redemptions:toast.purged', { count: deleted }))
        setPurging(false)
        setParams((p) => ({ ...p, page: 1 }))
      },
    })
  }

  const rows = list.data?.data ?? []
  const total = list.data?.total_count ?? 0
  const filtered = params.keyword !== '' || params.status !== 0

  return (
    <div className="grid grid-cols-1 gap-4">
      <div className="flex flex-wrap items-center gap-2">
        <form onSubmit={onSearch} className="flex w-full flex-wrap gap-2 sm:w-auto sm:flex-1 sm:flex-nowrap lg:max-w-2xl" role="search">
          <Input
            value={keywordInput}
            onChange={(e) => setKeywordInput(e.target.value)}
            placeholder={t('redemptions:search.placeholder')}
            aria-label={t('redemptions:search.placeholder')}
            className="w-full sm:w-auto sm:min-w-40 sm:flex-1"
            data-testid="redemption-search"
          />
          <NativeSelect
            value={params.status}
            onChange={(e) => setParams((p) => ({ ...p, page: 1, status: Number(e.target.value) }))}
            aria-label={t('redemptions:columns.status')}
            className="flex-1 sm:w-32 sm:flex-none"
            data-testid="redemption-status-filter"
          >
            <option value={0}>{t('redemptions:status.all')}</option>
            <option value={REDEMPTION_STATUS.enabled}>{t('redemptions:status.enabled')}</option>
            <option value={REDEMPTION_STATUS.disabled}>{t('redemptions:status.disabled')}</option>
            <option value={REDEMPTION_STATUS.used}>{t('redemptions:status.used')}</option>
          </NativeSelect>
          <Button type="submit" variant="outline">
            <SearchIcon />
            {t('common:actions.search')}
          </Button>
        </form>
        <div className="ml-auto flex gap-2">
          <Button variant="outline" onClick={() => setPurging(true)} data-testid="redemption-purge">
            <Trash2Icon />
            {t('redemptions:purge.button')}
          </Button>
          <Button onClick={openCreate} data-testid="redemption-create">
            <PlusIcon />
            {t('redemptions:create')}
          </Button>
        </div>
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={list.isPending} query={list}
            empty={rows.length === 0}
            emptyText={filtered ? t('redemptions:noMatch') : t('redemptions:empty')}
            emptyTestId="redemptions-empty"
          >
            <Table cards data-testid="redemptions-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('redemptions:columns.id')}</TableHead>
                  <TableHead>{t('redemptions:columns.name')}</TableHead>
                  <TableHead>{t('redemptions:columns.status')}</TableHead>
                  <TableHead>{t('redemptions:columns.quota')}</TableHead>
                  <TableHead>{t('redemptions:columns.createdAt')}</TableHead>
                  <TableHead>{t('redemptions:columns.redeemedAt')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('redemptions:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((r) => {
                  const s = STATUS[r.status]
                  const used = r.status === REDEMPTION_STATUS.used
                  return (
                    <TableRow key={r.id} data-testid={`redemption-row-${r.id}`}>
                      <TableCell className="tabular-nums">{r.id}</TableCell>
                      <TableCell data-card="title">
                        <div className="font-medium" data-testid="redemption-name">
                          {r.name}
                        </div>
                        <div className="max-w-48 truncate font-mono text-xs text-muted-foreground" title={r.code}>
                          {r.code}
                        </div>
                      </TableCell>
                      <TableCell>
                        <Badge variant={s?.variant ?? 'outline'} data-testid="redemption-status">
                          {s ? t(`redemptions:status.${s.key}`) : t('redemptions:status.unknown')}
                        </Badge>
                      </TableCell>
                      <TableCell data-testid="redemption-quota">{renderQuota(r.quota, display)}</TableCell>
                      <TableCell className="whitespace-nowrap">{formatTimestamp(r.created_at)}</TableCell>
                      <TableCell className="whitespace-nowrap">
                        {r.redeemed_at ? formatTimestamp(r.redeemed_at) : t('redemptions:notRedeemed')}
                      </TableCell>
                      <TableCell data-card="actions">
                        <div className="flex justify-end gap-1">
                          <RowAction
                            label={t('redemptions:actions.copy')}
                            onClick={() => void copyCode(r)}
                            testId="redemption-copy"
                          >
                            <CopyIcon />
                          </RowAction>
                          {!used && (
                            <>
                              <RowAction
                                label={t('common:actions.edit')}
                                onClick={() => openEdit(r)}
                                testId="redemption-edit"
                              >
                                <PencilIcon />
                              </RowAction>
                              <RowAction
                                label={
                                  r.status === REDEMPTION_STATUS.enabled
                                    ? t('common:actions.disable')
                                    : t('common:actions.enable')
                                }
                                onClick={() => toggleStatus(r)}
                                disabled={updateMutation.isPending}
                                testId="redemption-toggle"
                              >
                                {r.status === REDEMPTION_STATUS.enabled ? <PowerOffIcon /> : <PowerIcon />}
                              </RowAction>
                            </>
                          )}
                          <RowAction
                            label={t('common:actions.delete')}
                            onClick={() => setDeleting(r)}
                            testId="redemption-delete"
                            className="text-destructive hover:text-destructive"
                          >
                            <Trash2Icon />
                          </RowAction>
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
          onPageChange={(page) => setParams((p) => ({ ...p, page }))}
          onSizeChange={(size) => setParams((p) => ({ ...p, size, page: 1 }))}
        />
      )}

      <RedemptionFormDialog open={formOpen} onOpenChange={setFormOpen} redemption={editing} onCreated={setCreated} />
      <RedemptionCodesDialog codes={created} onClose={() => setCreated(null)} />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('redemptions:delete.title')}
        description={t('redemptions:delete.description', { name: deleting?.name ?? '' })}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="redemption-delete-dialog"
      />
      <ConfirmDialog
        open={purging}
        onOpenChange={setPurging}
        title={t('redemptions:purge.title')}
        description={t('redemptions:purge.description')}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmPurge}
        pending={purgeMutation.isPending}
        testId="redemption-purge-dialog"
      />
    </div>
  )
}
