import { PencilIcon, PlusIcon, SearchIcon, Trash2Icon } from 'lucide-react'
import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Switch } from '@/components/ui/switch'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { renderQuota } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
import { useDeleteGroup } from '../api/delete-group'
import { useGroups } from '../api/get-groups'
import { useSetGroupStatus } from '../api/set-group-status'
import type { UserGroup } from '../types'
import { GroupFormDialog } from './group-form-dialog'

/** User groups: search, paging, create/edit, enable/disable, delete. */
export function GroupsPanel() {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }

  const [params, setParams] = useState({ page: 1, size: 10, keyword: '' })
  const [keywordInput, setKeywordInput] = useState('')
  const groups = useGroups(params)

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<UserGroup | undefined>()
  const [deleting, setDeleting] = useState<UserGroup | null>(null)
  const statusMutation = useSetGroupStatus()
  const deleteMutation = useDeleteGroup()

  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    setParams((p) => ({ ...p, page: 1, keyword: keywordInput.trim() }))
  }
  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (g: UserGroup) => {
    setEditing(g)
    setFormOpen(true)
  }
  // Disabling a group affects everyone in it: asked first. Enabling is not.
  const [disabling, setDisabling] = useState<UserGroup | null>(null)
  const setEnabled = (g: UserGroup, enabled: boolean, after?: () => void) => {
    statusMutation.mutate(
      { id: g.id, enabled },
      {
        onSuccess: () => {
          notify.success(enabled ? t('groups:toast.enabled') : t('groups:toast.disabled'))
          after?.()
        },
      },
    )
  }
  const toggle = (g: UserGroup, enabled: boolean) => (enabled ? setEnabled(g, true) : setDisabling(g))
  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting.id, {
      onSuccess: () => {
        notify.success(t('groups:toast.deleted'))
        setDeleting(null)
        if (params.page > 1 && groups.data?.data.length === 1) setParams((p) => ({ ...p, page: p.page - 1 }))
      },
    })
  }

  const range = (g: UserGroup) => {
    if (!g.promotion) return t('groups:range.none')
    const min = renderQuota(g.min_topup, display)
    return g.max_topup === 0
      ? t('groups:range.from', { min })
      : t('groups:range.between', { min, max: renderQuota(g.max_topup, display) })
  }

  const rows = groups.data?.data ?? []
  const total = groups.data?.total_count ?? 0

  return (
    <div className="grid grid-cols-1 gap-4">
      <div className="flex flex-wrap items-center gap-2">
        <form onSubmit={onSearch} className="flex min-w-0 flex-1 gap-2 sm:max-w-md" role="search">
          <Input
            value={keywordInput}
            onChange={(e) => setKeywordInput(e.target.value)}
            placeholder={t('groups:search.placeholder')}
            aria-label={t('groups:search.placeholder')}
            data-testid="group-search"
          />
          <Button type="submit" variant="outline">
            <SearchIcon />
            {t('common:actions.search')}
          </Button>
        </form>
        <Button onClick={openCreate} className="ml-auto" data-testid="group-create">
          <PlusIcon />
          {t('groups:create')}
        </Button>
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={groups.isPending} query={groups}
            empty={rows.length === 0}
            emptyText={params.keyword ? t('groups:noMatch') : t('groups:empty')}
            emptyTestId="groups-empty"
          >
            <Table cards data-testid="groups-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('groups:columns.group')}</TableHead>
                  <TableHead className="text-right">{t('groups:columns.ratio')}</TableHead>
                  <TableHead className="text-right">{t('groups:columns.apiRate')}</TableHead>
                  <TableHead>{t('groups:columns.public')}</TableHead>
                  <TableHead>{t('groups:columns.promotion')}</TableHead>
                  <TableHead>{t('groups:columns.enabled')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('groups:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((g) => (
                  <TableRow key={g.id} data-testid={`group-row-${g.id}`}>
                    <TableCell data-card="title">
                      <div className="font-medium" data-testid="group-name">
                        {g.name}
                      </div>
                      <div className="font-mono text-xs text-muted-foreground">{g.symbol}</div>
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid="group-ratio">
                      {g.ratio}
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid="group-api-rate">
                      {g.api_rate === 0 ? t('groups:unlimited') : g.api_rate}
                    </TableCell>
                    <TableCell>
                      <Badge variant={g.public ? 'success' : 'secondary'}>
                        {g.public ? t('groups:public.yes') : t('groups:public.no')}
                      </Badge>
                    </TableCell>
                    <TableCell className="whitespace-nowrap" data-testid="group-promotion">
                      {range(g)}
                    </TableCell>
                    <TableCell>
                      <Switch
                        checked={g.enabled}
                        onCheckedChange={(checked) => toggle(g, checked)}
                        disabled={statusMutation.isPending}
                        aria-label={g.enabled ? t('common:actions.disable') : t('common:actions.enable')}
                        data-testid="group-toggle"
                      />
                    </TableCell>
                    <TableCell data-card="actions">
                      <div className="flex justify-end gap-1">
                        <RowAction label={t('common:actions.edit')} onClick={() => openEdit(g)} testId="group-edit">
                          <PencilIcon />
                        </RowAction>
                        <RowAction
                          label={t('common:actions.delete')}
                          onClick={() => setDeleting(g)}
                          testId="group-delete"
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

      {total > 0 && (
        <DataPagination
          page={params.page}
          size={params.size}
          total={total}
          onPageChange={(page) => setParams((p) => ({ ...p, page }))}
          onSizeChange={(size) => setParams((p) => ({ ...p, size, page: 1 }))}
        />
      )}

      <GroupFormDialog open={formOpen} onOpenChange={setFormOpen} group={editing} />
      <ConfirmDialog
        open={disabling !== null}
        onOpenChange={(open) => !open && setDisabling(null)}
        title={t('groups:disable.title')}
        description={t('groups:disable.description', { name: disabling?.name ?? '', symbol: disabling?.symbol ?? '' })}
        confirmLabel={t('common:actions.disable')}
        onConfirm={() => disabling && setEnabled(disabling, false, () => setDisabling(null))}
        pending={statusMutation.isPending}
        testId="group-disable-dialog"
      />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('groups:delete.title')}
        description={t('groups:delete.description', { name: deleting?.name ?? '', symbol: deleting?.symbol ?? '' })}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="group-delete-dialog"
      />
    </div>
  )
}
