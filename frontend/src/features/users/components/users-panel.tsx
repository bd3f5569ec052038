import { CoinsIcon, ShieldMinusIcon, ShieldPlusIcon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { FilterBar, FilterInput, FilterSelect } from '@/components/filter-bar'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction, RowAction, TitleCell, ToggleAction } from '@/components/list-kit'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { useListScreen } from '@/hooks/use-list-screen'
import { formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { roleKey } from '@/lib/roles'
import { notify } from '@/lib/toast'
import { useUser } from '@/stores/session'
import { useQuotaDisplay } from '@/stores/site'
import { ROLE } from '@/types/api'
import { useUsers } from '../api/get-users'
import { useManageUser } from '../api/manage-user'
import { USER_STATUS, type ManageAction, type ManagedUser } from '../types'
import { QuotaDialog } from './quota-dialog'
import { UserFormDialog } from './user-form-dialog'

const ORDERS = ['-id', 'id', '-quota', '-used_quota', '-request_count', 'username', '-created_at'] as const
type OrderKey = 'idDesc' | 'idAsc' | 'quotaDesc' | 'usedDesc' | 'requestsDesc' | 'usernameAsc' | 'createdDesc'
const ORDER_KEYS: Record<(typeof ORDERS)[number], OrderKey> = {
  '-id': 'idDesc',
  id: 'idAsc',
  '-quota': 'quotaDesc',
  '-used_quota': 'usedDesc',
  '-request_count': 'requestsDesc',
  username: 'usernameAsc',
  '-created_at': 'createdDesc',
}

const ROLE_VARIANT: Record<number, BadgeVariant> = {
  [ROLE.user]: 'secondary',
  [ROLE.admin]: 'warning',
  [ROLE.root]: 'default',
}

const FILTERS = { keyword: '', group: '', role: 0, status: 0, order: '-id' }

/** Users: filters, ordering, paging, create/edit, quota changes, enable/disable, roles, delete. */
export function UsersPanel() {
  const { t } = useTranslation()
  const me = useUser()
  const isRoot = me?.role === ROLE.root
  const display = useQuotaDisplay()
  const list = useListScreen<ManagedUser, typeof FILTERS>({ filters: FILTERS, orderKeys: ['order'] })
  const users = useUsers(list.params)
  const rows = users.data?.data ?? []

  const [quotaUser, setQuotaUser] = useState<ManagedUser | null>(null)
  // Promote, demote and disable change what someone may do: asked first.
  const [confirming, setConfirming] = useState<{ user: ManagedUser; action: 'promote' | 'demote' | 'disable' } | null>(null)
  const manage = useManageUser()

  const run = (u: ManagedUser, action: ManageAction, after?: () => void) => {
    manage.mutate(
      { id: u.id, action },
      {
        onSuccess: () => {
          notify.success(t(`users:toast.${action}`, { name: u.username }))
          after?.()
        },
      },
    )
  }
  const confirmDelete = () => {
    const deleting = list.deleting
    if (!deleting) return
    run(deleting, 'delete', () => {
      list.setDeleting(null)
      list.deleted(1, rows.length)
    })
  }

  /** Administrators act on users below them; only root changes roles; nobody changes root. */
  const canManage = (u: ManagedUser) => (me?.role ?? 0) > u.role

  const actions = (u: ManagedUser) => {
    if (!canManage(u)) return <p className="text-right text-xs whitespace-nowrap text-muted-foreground">{t('users:protected')}</p>
    const enabled = u.status === USER_STATUS.enabled
    const promote = u.role !== ROLE.admin
    return (
      <>
        <EditAction onClick={() => list.form.edit(u)} testId="user-edit" />
        <RowAction label={t('users:actions.quota')} onClick={() => setQuotaUser(u)} testId="user-quota-action">
          <CoinsIcon />
        </RowAction>
        <ToggleAction
          enabled={enabled}
          onClick={() => (enabled ? setConfirming({ user: u, action: 'disable' }) : run(u, 'enable'))}
          disabled={manage.isPending}
          testId="user-toggle"
        />
        {isRoot && (
          <RowAction
            label={promote ? t('users:actions.promote') : t('users:actions.demote')}
            onClick={() => setConfirming({ user: u, action: promote ? 'promote' : 'demote' })}
            disabled={manage.isPending}
            testId={promote ? 'user-promote' : 'user-demote'}
          >
            {promote ? <ShieldPlusIcon /> : <ShieldMinusIcon />}
          </RowAction>
        )}
        <DeleteAction onClick={() => list.setDeleting(u)} testId="user-delete" />
      </>
    )
  }

  const columns: Column<ManagedUser>[] = [
    { id: 'id', header: t('users:columns.id'), cellClassName: 'tabular-nums', sortBy: ['-id', 'id'], cell: (u) => u.id },
    {
      id: 'user',
      header: t('users:columns.user'),
      card: 'title',
      essential: true,
      sortBy: ['username'],
      cell: (u) => (
        <TitleCell
          text={u.username}
          testId="user-username"
          sub={[u.display_name, u.email].filter(Boolean).join(' · ')}
          subClassName="max-w-48 truncate text-xs text-muted-foreground"
        />
      ),
    },
    { id: 'group', header: t('users:columns.group'), cell: (u) => <Badge variant="outline">{u.group}</Badge> },
    {
      id: 'quota',
      header: t('users:columns.quota'),
      className: 'whitespace-nowrap',
      sortBy: ['-quota', '-used_quota'],
      cell: (u) => (
        <div>
          <div data-testid="user-quota">{renderQuota(u.quota, display)}</div>
          <div className="text-xs text-muted-foreground" data-testid="user-used">
            {t('users:usedQuota', { amount: renderQuota(u.used_quota, display) })}
          </div>
          {u.aff_count > 0 && (
            <div className="text-xs text-muted-foreground" data-testid="user-aff">
              {t('users:invited', { count: u.aff_count, amount: renderQuota(u.aff_quota, display) })}
            </div>
          )}
        </div>
      ),
    },
    {
      id: 'requests',
      header: t('users:columns.requests'),
      right: true,
      cellClassName: 'tabular-nums',
      sortBy: ['-request_count'],
      cell: (u) => renderNumber(u.request_count),
    },
    {
      id: 'role',
      header: t('users:columns.role'),
      cell: (u) => (
        <Badge variant={ROLE_VARIANT[u.role] ?? 'outline'} data-testid="user-role">
          {t(`common:role.${roleKey(u.role)}`)}
        </Badge>
      ),
    },
    {
      id: 'status',
      header: t('users:columns.status'),
      cell: (u) => {
        const enabled = u.status === USER_STATUS.enabled
        return (
          <Badge variant={enabled ? 'success' : 'secondary'} data-testid="user-status">
            {enabled ? t('users:status.enabled') : t('users:status.disabled')}
          </Badge>
        )
      },
    },
    {
      id: 'createdAt',
      header: t('users:columns.createdAt'),
      className: 'hidden 2xl:table-cell',
      cellClassName: 'whitespace-nowrap',
      sortBy: ['-created_at'],
      cell: (u) => formatTimestamp(u.created_at),
    },
    actionsColumn(t('users:columns.actions'), actions),
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        label={t('users:filters.label')}
        onSearch={list.search}
        onReset={list.reset}
        className="sm:grid-cols-2 lg:grid-cols-3 xl:grid-cols-6"
        buttonsClassName="flex-wrap sm:col-span-2 lg:col-span-3 xl:col-span-6"
        testId="user-filters"
        searchTestId="user-search"
        buttons={
          <CreateButton label={t('users:create')} onClick={list.form.create} className="ml-auto" testId="user-create" />
        }
      >
        <FilterInput
          label={t('users:filters.keyword')}
          className="sm:col-span-2 lg:col-span-1 xl:col-span-2"
          {...list.bind('keyword')}
          placeholder={t('users:filters.keywordPlaceholder')}
          data-testid="user-filter-keyword"
        />
        <FilterInput label={t('users:filters.group')} {...list.bind('group')} data-testid="user-filter-group" />
        <FilterSelect label={t('users:filters.role')} {...list.bind('role')} data-testid="user-filter-role">
          <option value={0}>{t('users:filters.any')}</option>
          <option value={ROLE.user}>{t('common:role.user')}</option>
          <option value={ROLE.admin}>{t('common:role.admin')}</option>
          <option value={ROLE.root}>{t('common:role.root')}</option>
        </FilterSelect>
        <FilterSelect label={t('users:filters.status')} {...list.bind('status')} data-testid="user-filter-status">
          <option value={0}>{t('users:filters.any')}</option>
          <option value={USER_STATUS.enabled}>{t('users:status.enabled')}</option>
          <option value={USER_STATUS.disabled}>{t('users:status.disabled')}</option>
        </FilterSelect>
        <FilterSelect label={t('users:filters.order')} {...list.bind('order')} data-testid="user-filter-order">
          {ORDERS.map((o) => (
            <option key={o} value={o}>
              {t(`users:order.${ORDER_KEYS[o]}`)}
            </option>
          ))}
        </FilterSelect>
      </FilterBar>

      <DataTable
        name="user"
        columns={columns}
        query={users}
        list={list}
        sort={{ value: list.filters.order, onChange: (order) => list.setFilters({ order }) }}
        settings
        emptyText={list.filtered ? t('users:noMatch') : t('users:empty')}
      />

      <UserFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} user={list.form.editing} canCreateAdmin={isRoot} />
      <QuotaDialog user={quotaUser} onClose={() => setQuotaUser(null)} />
      <ConfirmDialog
        open={confirming !== null}
        onOpenChange={(open) => !open && setConfirming(null)}
        title={confirming ? t(`users:confirm.${confirming.action}.title`) : ''}
        description={confirming ? t(`users:confirm.${confirming.action}.description`, { name: confirming.user.username }) : ''}
        confirmLabel={confirming ? t(`users:confirm.${confirming.action}.confirm`) : ''}
        onConfirm={() => confirming && run(confirming.user, confirming.action, () => setConfirming(null))}
        pending={manage.isPending}
        destructive={confirming?.action !== 'promote'}
        testId="user-confirm-dialog"
      />
      <ConfirmDialog
        {...list.deleteDialog}
        title={t('users:delete.title')}
        description={t('users:delete.description', { name: list.deleting?.username ?? '' })}
        onConfirm={confirmDelete}
        pending={manage.isPending}
        testId="user-delete-dialog"
      />
    </div>
  )
}
