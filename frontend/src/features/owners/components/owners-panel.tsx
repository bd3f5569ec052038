import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { FilterBar, SearchInput } from '@/components/filter-bar'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { pageOf, useListScreen } from '@/hooks/use-list-screen'
import { useDeleteOwner } from '../api/delete-owner'
import { useOwners } from '../api/get-owners'
import { OWNER_MIN_ID } from '../schemas'
import type { ModelOwner } from '../types'
import { OwnerFormDialog } from './owner-form-dialog'

const FILTERS = { keyword: '' }

/** Model owners: the built-in ones (channel types) and the operator's own (id >= 1000). */
export function OwnersPanel() {
  const { t } = useTranslation()
  const owners = useOwners()
  const list = useListScreen<ModelOwner, typeof FILTERS>({ filters: FILTERS, size: 20 })
  const deleteMutation = useDeleteOwner()

  // The server answers the whole list; it is searched and paged here.
  const needle = list.filters.keyword.toLowerCase()
  const matched = (owners.data ?? []).filter(
    (o) => !needle || o.name.toLowerCase().includes(needle) || String(o.id) === needle,
  )
  const { rows, page } = pageOf(matched, list.page, list.size)

  const columns: Column<ModelOwner>[] = [
    { id: 'id', header: t('owners:columns.id'), cellClassName: 'tabular-nums', cell: (owner) => owner.id },
    {
      id: 'name',
      header: t('owners:columns.name'),
      card: 'title',
      essential: true,
      cell: (owner) => (
        <div className="flex items-center gap-2">
          {owner.icon ? (
            <img src={owner.icon} alt="" className="size-6 shrink-0 rounded object-contain" loading="lazy" />
          ) : (
            <span
              aria-hidden
              className="flex size-6 shrink-0 items-center justify-center rounded bg-muted text-xs font-semibold uppercase"
            >
              {owner.name.slice(0, 1)}
            </span>
          )}
          <span className="font-medium" data-testid="owner-name">
            {owner.name}
          </span>
        </div>
      ),
    },
    {
      id: 'kind',
      header: t('owners:columns.kind'),
      cell: (owner) =>
        owner.id >= OWNER_MIN_ID ? (
          <Badge variant="success">{t('owners:kind.custom')}</Badge>
        ) : (
          <Badge variant="secondary">{t('owners:kind.builtin')}</Badge>
        ),
    },
    actionsColumn(t('owners:columns.actions'), (owner) => (
      <>
        <EditAction onClick={() => list.form.edit(owner)} testId="owner-edit" />
        <DeleteAction onClick={() => list.setDeleting(owner)} testId="owner-delete" />
      </>
    )),
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        actions={<CreateButton label={t('owners:create')} onClick={list.form.create} testId="owner-create" />}
      >
        <SearchInput
          icon
          className="flex-1"
          value={list.draft.keyword}
          onChange={(e) => list.setFilters({ keyword: e.target.value }, { replace: true })}
          placeholder={t('owners:search.placeholder')}
          data-testid="owner-search"
        />
      </FilterBar>

      <DataTable
        name="owner"
        columns={columns}
        query={owners}
        rows={rows}
        pagination={{ ...list.pagination(matched.length), page }}
        emptyText={needle ? t('owners:noMatch') : t('owners:empty')}
      />

      <OwnerFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} owner={list.form.editing} />
      <ConfirmDialog
        {...list.deleteDialog}
        title={t('owners:delete.title')}
        description={t('owners:delete.description', { name: list.deleting?.name ?? '' })}
        onConfirm={list.confirmDelete((owner, done) => deleteMutation.mutate(owner.id, done), t('owners:toast.deleted'), rows.length)}
        pending={deleteMutation.isPending}
        testId="owner-delete-dialog"
      />
    </div>
  )
}
