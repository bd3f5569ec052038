import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { FilterBar, SearchInput } from '@/components/filter-bar'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction, TitleCell } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Switch } from '@/components/ui/switch'
import { useListScreen } from '@/hooks/use-list-screen'
import { renderQuota } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useQuotaDisplay } from '@/stores/site'
import { useDeleteGroup } from '../api/delete-group'
import { useGroups } from '../api/get-groups'
import { useSetGroupStatus } from '../api/set-group-status'
import type { UserGroup } from '../types'
import { GroupFormDialog } from './group-form-dialog'

const FILTERS = { keyword: '' }

/** User groups: search, paging, create/edit, enable/disable, delete. */
export function GroupsPanel() {
  const { t } = useTranslation()
  const display = useQuotaDisplay()
  const list = useListScreen<UserGroup, typeof FILTERS>({ filters: FILTERS })
  const groups = useGroups(list.params)
  const rows = groups.data?.data ?? []
  const statusMutation = useSetGroupStatus()
  const deleteMutation = useDeleteGroup()

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

  const range = (g: UserGroup) => {
    if (!g.promotion) return t('groups:range.none')
    const min = renderQuota(g.min_topup, display)
    return g.max_topup === 0
      ? t('groups:range.from', { min })
      : t('groups:range.between', { min, max: renderQuota(g.max_topup, display) })
  }

  const columns: Column<UserGroup>[] = [
    {
      id: 'group',
      header: t('groups:columns.group'),
      card: 'title',
      essential: true,
      cell: (g) => <TitleCell text={g.name} testId="group-name" sub={g.symbol} />,
    },
    { id: 'ratio', header: t('groups:columns.ratio'), right: true, cellClassName: 'tabular-nums', testId: 'group-ratio', cell: (g) => g.ratio },
    {
      id: 'apiRate',
      header: t('groups:columns.apiRate'),
      right: true,
      cellClassName: 'tabular-nums',
      testId: 'group-api-rate',
      cell: (g) => (g.api_rate === 0 ? t('groups:unlimited') : g.api_rate),
    },
    {
      id: 'public',
      header: t('groups:columns.public'),
      cell: (g) => <Badge variant={g.public ? 'success' : 'secondary'}>{g.public ? t('groups:public.yes') : t('groups:public.no')}</Badge>,
    },
    { id: 'promotion', header: t('groups:columns.promotion'), className: 'whitespace-nowrap', testId: 'group-promotion', cell: range },
    {
      id: 'enabled',
      header: t('groups:columns.enabled'),
      cell: (g) => (
        <Switch
          checked={g.enabled}
          onCheckedChange={(checked) => toggle(g, checked)}
          disabled={statusMutation.isPending}
          aria-label={g.enabled ? t('common:actions.disable') : t('common:actions.enable')}
          data-testid="group-toggle"
        />
      ),
    },
    actionsColumn(t('groups:columns.actions'), (g) => (
      <>
        <EditAction onClick={() => list.form.edit(g)} testId="group-edit" />
        <DeleteAction onClick={() => list.setDeleting(g)} testId="group-delete" />
      </>
    )),
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        onSearch={list.search}
        actions={<CreateButton label={t('groups:create')} onClick={list.form.create} testId="group-create" />}
      >
        <SearchInput {...list.bind('keyword')} placeholder={t('groups:search.placeholder')} data-testid="group-search" />
      </FilterBar>

      <DataTable name="group" columns={columns} query={groups} list={list} settings emptyText={list.filtered ? t('groups:noMatch') : t('groups:empty')} />

      <GroupFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} group={list.form.editing} />
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
        {...list.deleteDialog}
        title={t('groups:delete.title')}
        description={t('groups:delete.description', { name: list.deleting?.name ?? '', symbol: list.deleting?.symbol ?? '' })}
        onConfirm={list.confirmDelete((row, done) => deleteMutation.mutate(row.id, done), t('groups:toast.deleted'), rows.length)}
        pending={deleteMutation.isPending}
        testId="group-delete-dialog"
      />
    </div>
  )
}
