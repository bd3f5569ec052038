import { CloudDownloadIcon, FileJsonIcon, PencilIcon, PlusIcon, Trash2Icon, TriangleAlertIcon } from 'lucide-react'
import { useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { notify } from '@/lib/toast'
import { useDeletePrices } from '../api/mutations'
import { useModelOwners, usePrices, usePriceWarnings } from '../api/queries'
import type { Price } from '../types'
import { LockedMark, ownerName, PriceText, PriceTypeBadge } from './price-cells'
import { PriceBatchDialog } from './price-batch-dialog'
import { PriceFormDialog } from './price-form-dialog'
import { PriceSyncDialog } from './price-sync-dialog'
import { DEFAULT_VIEW, matchesView, PriceToolbar } from './price-toolbar'

const SHOWN_WARNINGS = 20

/** Pricing editor (admin): list, create/edit, delete one or many, batch JSON, warnings. */
export function PricingPanel() {
  const { t } = useTranslation()
  const prices = usePrices()
  const owners = useModelOwners()
  const warnings = usePriceWarnings()
  const deleteMutation = useDeletePrices()
  const [view, setView] = useState(DEFAULT_VIEW)
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<Price | undefined>()
  const [batchOpen, setBatchOpen] = useState(false)
  const [syncOpen, setSyncOpen] = useState(false)
  const [deleting, setDeleting] = useState<string[] | null>(null)

  const all = useMemo(() => prices.data ?? [], [prices.data])
  const rows = all.filter((p) => matchesView(view, p.model, p.channel_type)).sort((a, b) => a.model.localeCompare(b.model))
  const selectedRows = useMemo(() => all.filter((p) => selected.has(p.model)), [all, selected])
  const allShownSelected = rows.length > 0 && rows.every((p) => selected.has(p.model))

  const toggle = (model: string) =>
    setSelected((prev) => {
      const next = new Set(prev)
      if (next.has(model)) next.delete(model)
      else next.add(model)
      return next
    })
  const toggleAll = () =>
    setSelected((prev) => {
      const next = new Set(prev)
      for (const p of rows) {
        if (allShownSelected) next.delete(p.model)
        else next.add(p.model)
      }
      return next
    })

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

  const w = warnings.data
  const hasWarnings = !!w && (w.unpriced_models.length > 0 || w.unknown_owner.length > 0)

  return (
    <div className="grid grid-cols-1 gap-4">
      {hasWarnings && (
        <div
          className="grid gap-2 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950/40 dark:text-amber-100"
          role="alert"
          data-testid="price-warnings"
        >
          {w.unpriced_models.length > 0 && (
            <p className="flex gap-2">
              <TriangleAlertIcon className="mt-0.5 size-4 shrink-0" />
              <span>
                {t('pricing:warnings.unpriced', { count: w.unpriced_models.length })}{' '}
                <span className="font-mono text-xs">{w.unpriced_models.slice(0, SHOWN_WARNINGS).join(', ')}</span>
                {w.unpriced_models.length > SHOWN_WARNINGS && ' …'}
              </span>
            </p>
          )}
          {w.unknown_owner.length > 0 && (
            <p className="flex gap-2">
              <TriangleAlertIcon className="mt-0.5 size-4 shrink-0" />
              <span>
                {t('pricing:warnings.unknownOwner', { count: w.unknown_owner.length })}{' '}
                <span className="font-mono text-xs">{w.unknown_owner.slice(0, SHOWN_WARNINGS).join(', ')}</span>
                {w.unknown_owner.length > SHOWN_WARNINGS && ' …'}
              </span>
            </p>
          )}
        </div>
      )}

      <div className="flex flex-wrap items-start gap-2">
        <div className="w-full min-w-0 xl:w-auto xl:flex-1">
          <PriceToolbar view={view} onChange={setView} owners={owners.data ?? []} />
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
          <Button
            onClick={() => {
              setEditing(undefined)
              setFormOpen(true)
            }}
            data-testid="price-create"
          >
            <PlusIcon />
            {t('pricing:create')}
          </Button>
        </div>
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={prices.isPending} query={prices}
            empty={rows.length === 0}
            emptyText={all.length === 0 ? t('pricing:editor.empty') : t('pricing:noMatch')}
            emptyTestId="pricing-empty"
          >
            <Table cards data-testid="pricing-table">
              <TableHeader>
                <TableRow>
                  <TableHead data-card="hide" className="w-8">
                    <input
                      type="checkbox"
                      className="size-4 accent-primary"
                      checked={allShownSelected}
                      onChange={toggleAll}
                      aria-label={t('pricing:selectAll')}
                    />
                  </TableHead>
                  <TableHead>{t('pricing:columns.model')}</TableHead>
                  <TableHead>{t('pricing:columns.owner')}</TableHead>
                  <TableHead>{t('pricing:columns.type')}</TableHead>
                  <TableHead>{t('pricing:columns.inputRatio')}</TableHead>
                  <TableHead>{t('pricing:columns.outputRatio')}</TableHead>
                  <TableHead>{t('pricing:columns.input')}</TableHead>
                  <TableHead>{t('pricing:columns.output')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('pricing:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((p) => (
                  <TableRow key={p.model} data-testid={`price-row-${p.model}`} data-state={selected.has(p.model) ? 'selected' : undefined}>
                    <TableCell data-card="hide">
                      <input
                        type="checkbox"
                        className="size-4 accent-primary"
                        checked={selected.has(p.model)}
                        onChange={() => toggle(p.model)}
                        aria-label={t('pricing:select', { model: p.model })}
                      />
                    </TableCell>
                    <TableCell data-card="title" className="font-medium whitespace-nowrap">
                      <span className="inline-flex items-center gap-1.5">
                        {p.model}
                        <LockedMark locked={p.locked} />
                      </span>
                    </TableCell>
                    <TableCell>{ownerName(owners.data, p.channel_type)}</TableCell>
                    <TableCell>
                      <PriceTypeBadge type={p.type} />
                    </TableCell>
                    <TableCell className="tabular-nums">{p.input}</TableCell>
                    <TableCell className="tabular-nums">{p.type === 'tokens' ? p.output : '-'}</TableCell>
                    <TableCell>
                      <PriceText ratio={p.input} type={p.type} currency={view.currency} per1M={view.per1M} />
                    </TableCell>
                    <TableCell>
                      {p.type === 'tokens' ? <PriceText ratio={p.output} type="tokens" currency={view.currency} per1M={view.per1M} /> : '-'}
                    </TableCell>
                    <TableCell data-card="actions">
                      <div className="flex justify-end gap-1">
                        <RowAction
                          label={t('common:actions.edit')}
                          onClick={() => {
                            setEditing(p)
                            setFormOpen(true)
                          }}
                          testId="price-edit"
                        >
                          <PencilIcon />
                        </RowAction>
                        <RowAction
                          label={t('common:actions.delete')}
                          onClick={() => setDeleting([p.model])}
                          testId="price-delete"
                          className="text-destructive hover:text-destructive"
                        >
                          <Trash2Icon />
                        </RowAction>
                      </div>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>

      <PriceFormDialog open={formOpen} onOpenChange={setFormOpen} price={editing} owners={owners.data ?? []} />
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
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="price-delete-dialog"
      />
    </div>
  )
}
