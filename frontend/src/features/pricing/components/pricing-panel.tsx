import { CloudDownloadIcon, FileJsonIcon, Trash2Icon, TriangleAlertIcon } from 'lucide-react'
import { useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, selectColumn, sortRows } from '@/components/data-table'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { notify } from '@/lib/toast'
import { useDeletePrices } from '../api/mutations'
import { useModelOwners, usePrices, usePriceWarnings } from '../api/queries'
import type { Price } from '../types'
import { LockedMark, priceColumns } from './price-cells'
import { PriceBatchDialog } from './price-batch-dialog'
import { PriceFormDialog } from './price-form-dialog'
import { PriceSyncDialog } from './price-sync-dialog'
import { matchesView, PriceToolbar, usePriceList } from './price-toolbar'

const SHOWN_WARNINGS = 20

/** Pricing editor (admin): list, create/edit, delete one or many, batch JSON, warnings. */
export function PricingPanel() {
  const { t } = useTranslation()
  const prices = usePrices()
  const owners = useModelOwners()
  const warnings = usePriceWarnings()
  const deleteMutation = useDeletePrices()
  const { list, view, toolbar, sort } = usePriceList<Price>()
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [batchOpen, setBatchOpen] = useState(false)
  const [syncOpen, setSyncOpen] = useState(false)
  const [deleting, setDeleting] = useState<string[] | null>(null)

  const all = useMemo(() => prices.data ?? [], [prices.data])
  const shown = all.filter((p) => matchesView(view, p.model, p.channel_type))
  const selectedRows = useMemo(() => all.filter((p) => selected.has(p.model)), [all, selected])

  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting, {
      onSuccess: (res) => {
        notify.success(t('pricing:toast.deleted', { count: res.deleted }))
        setSelected((prev) => new Set([...prev].filter((m) => !deleting.includes(m))))
        setDeleting(null)
      },
    })
  }

  const c = priceColumns<Price>(t, {
    priced: (p) => ({ model: p.model, price: p }),
    owners: owners.data,
    view,
    modelCell: (p) => (
      <span className="inline-flex items-center gap-1.5">
        {p.model}
        <LockedMark locked={p.locked} />
      </span>
    ),
  })
  const columns = [
    selectColumn<Price, string>({
      selected,
      rows: shown,
      keyOf: (p) => p.model,
      onChange: setSelected,
      allLabel: t('pricing:selectAll'),
      rowLabel: (p) => t('pricing:select', { model: p.model }),
    }),
    c.model,
    c.owner,
    c.type,
    { id: 'inputRatio', header: t('pricing:columns.inputRatio'), cellClassName: 'tabular-nums', cell: (p: Price) => p.input },
    {
      id: 'outputRatio',
      header: t('pricing:columns.outputRatio'),
      cellClassName: 'tabular-nums',
      cell: (p: Price) => (p.type === 'tokens' ? p.output : '-'),
    },
    c.input,
    c.output,
    actionsColumn<Price>(t('pricing:columns.actions'), (p) => (
      <>
        <EditAction onClick={() => list.form.edit(p)} testId="price-edit" />
        <DeleteAction onClick={() => setDeleting([p.model])} testId="price-delete" />
      </>
    )),
  ]
  const rows = sortRows(shown, columns, sort.value)

  const w = warnings.data
  const warning = (models: string[], text: string) =>
    models.length > 0 && (
      <p className="flex gap-2">
        <TriangleAlertIcon className="mt-0.5 size-4 shrink-0" />
        <span>
          {text} <span className="font-mono text-xs">{models.slice(0, SHOWN_WARNINGS).join(', ')}</span>
          {models.length > SHOWN_WARNINGS && ' …'}
        </span>
      </p>
    )

  return (
    <div className="grid grid-cols-1 gap-4">
      {w && (w.unpriced_models.length > 0 || w.unknown_owner.length > 0) && (
        <div
          className="grid gap-2 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-100"
          role="alert"
          data-testid="price-warnings"
        >
          {warning(w.unpriced_models, t('pricing:warnings.unpriced', { count: w.unpriced_models.length }))}
          {warning(w.unknown_owner, t('pricing:warnings.unknownOwner', { count: w.unknown_owner.length }))}
        </div>
      )}

      <div className="flex flex-wrap items-start gap-2">
        <div className="w-full min-w-0 xl:w-auto xl:flex-1">
          <PriceToolbar {...toolbar} owners={owners.data ?? []} />
        </div>
        <div className="flex flex-wrap gap-2">
          {selected.size > 0 && (
            <Button variant="destructive" onClick={() => setDeleting([...selected])} data-testid="price-delete-selected">
              <Trash2Icon />
              {t('pricing:deleteSelected', { count: selected.size })}
            </Button>
          )}
          <Button variant="outline" onClick={() => setSyncOpen(true)} data-testid="price-sync">
            <CloudDownloadIcon />
            {t('pricing:sync.open')}
          </Button>
          <Button variant="outline" onClick={() => setBatchOpen(true)} data-testid="price-batch">
            <FileJsonIcon />
            {selected.size > 0 ? t('pricing:batch.editSelected') : t('pricing:batch.open')}
          </Button>
          <CreateButton label={t('pricing:create')} onClick={list.form.create} testId="price-create" />
        </div>
      </div>

      <DataTable
        name="price"
        testId="pricing-table"
        emptyTestId="pricing-empty"
        columns={columns}
        query={prices}
        rows={rows}
        rowKey={(p) => p.model}
        rowProps={(p) => ({ 'data-state': selected.has(p.model) ? 'selected' : undefined })}
        sort={sort}
        settings
        emptyText={all.length === 0 ? t('pricing:editor.empty') : t('pricing:noMatch')}
      />

      <PriceFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} price={list.form.editing} owners={owners.data ?? []} />
      <PriceBatchDialog open={batchOpen} onOpenChange={setBatchOpen} initial={selectedRows} />
      <PriceSyncDialog open={syncOpen} onOpenChange={setSyncOpen} />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('pricing:delete.title')}
        description={
          deleting?.length === 1
            ? t('pricing:delete.one', { model: deleting[0] })
            : t('pricing:delete.many', { count: deleting?.length ?? 0 })
        }
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="price-delete-dialog"
      />
    </div>
  )
}
