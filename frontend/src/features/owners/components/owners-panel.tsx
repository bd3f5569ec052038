import { PencilIcon, PlusIcon, SearchIcon, Trash2Icon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { notify } from '@/lib/toast'
import { useDeleteOwner } from '../api/delete-owner'
import { useOwners } from '../api/get-owners'
import { OWNER_MIN_ID } from '../schemas'
import type { ModelOwner } from '../types'
import { OwnerFormDialog } from './owner-form-dialog'

/** Model owners: the built-in ones (channel types) and the operator's own (id >= 1000). */
export function OwnersPanel() {
  const { t } = useTranslation()
  const owners = useOwners()
  const [keyword, setKeyword] = useState('')
  // The server answers the whole list; it is paged here.
  const [paging, setPaging] = useState({ page: 1, size: 20 })
  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<ModelOwner | undefined>()
  const [deleting, setDeleting] = useState<ModelOwner | null>(null)
  const deleteMutation = useDeleteOwner()

  const needle = keyword.trim().toLowerCase()
  const matched = (owners.data ?? []).filter(
    (o) => !needle || o.name.toLowerCase().includes(needle) || String(o.id) === needle,
  )
  const pages = Math.max(1, Math.ceil(matched.length / paging.size))
  const page = Math.min(paging.page, pages)
  const rows = matched.slice((page - 1) * paging.size, page * paging.size)

  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (owner: ModelOwner) => {
    setEditing(owner)
    setFormOpen(true)
  }
  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting.id, {
      onSuccess: () => {
        notify.success(t('owners:toast.deleted'))
        setDeleting(null)
      },
    })
  }

  return (
    <div className="grid grid-cols-1 gap-4">
      <div className="flex flex-wrap items-center gap-2">
        <div className="relative min-w-0 flex-1 sm:max-w-md" role="search">
          <SearchIcon className="pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-muted-foreground" />
          <Input
            value={keyword}
            onChange={(e) => {
              setKeyword(e.target.value)
              setPaging((p) => ({ ...p, page: 1 }))
            }}
            placeholder={t('owners:search.placeholder')}
            aria-label={t('owners:search.placeholder')}
            className="pl-8"
            data-testid="owner-search"
          />
        </div>
        <Button onClick={openCreate} className="ml-auto" data-testid="owner-create">
          <PlusIcon />
          {t('owners:create')}
        </Button>
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={owners.isPending} query={owners}
            empty={rows.length === 0}
            emptyText={needle ? t('owners:noMatch') : t('owners:empty')}
            emptyTestId="owners-empty"
          >
            <Table cards data-testid="owners-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('owners:columns.id')}</TableHead>
                  <TableHead>{t('owners:columns.name')}</TableHead>
                  <TableHead>{t('owners:columns.kind')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('owners:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((owner) => (
                  <TableRow key={owner.id} data-testid={`owner-row-${owner.id}`}>
                    <TableCell className="tabular-nums">{owner.id}</TableCell>
                    <TableCell data-card="title">
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
                    </TableCell>
                    <TableCell>
                      {owner.id >= OWNER_MIN_ID ? (
                        <Badge variant="success">{t('owners:kind.custom')}</Badge>
                      ) : (
                        <Badge variant="secondary">{t('owners:kind.builtin')}</Badge>
                      )}
                    </TableCell>
                    <TableCell data-card="actions">
                      <div className="flex justify-end gap-1">
                        <RowAction label={t('common:actions.edit')} onClick={() => openEdit(owner)} testId="owner-edit">
                          <PencilIcon />
                        </RowAction>
                        <RowAction
                          label={t('common:actions.delete')}
                          onClick={() => setDeleting(owner)}
                          testId="owner-delete"
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

      {matched.length > 0 && (
        <DataPagination
          page={page}
          size={paging.size}
          total={matched.length}
          onPageChange={(next) => setPaging((p) => ({ ...p, page: next }))}
          onSizeChange={(size) => setPaging({ size, page: 1 })}
        />
      )}

      <OwnerFormDialog open={formOpen} onOpenChange={setFormOpen} owner={editing} />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('owners:delete.title')}
        description={t('owners:delete.description', { name: deleting?.name ?? '' })}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="owner-delete-dialog"
      />
    </div>
  )
}
