import {
  CoinsIcon,
  PencilIcon,
  PlusIcon,
  PowerIcon,
  PowerOffIcon,
  RotateCcwIcon,
  SearchIcon,
  ShieldMinusIcon,
  ShieldPlusIcon,
  Trash2Icon,
} from 'lucide-react'
import { useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { roleKey } from '@/lib/roles'
import { notify } from '@/lib/toast'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import { ROLE } from '@/types/api'
import type { UserListParams } from '../api/keys'
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

type Filters = Omit<UserListParams, 'page' | 'size'>
const EMPTY: Filters = { keyword: '', group: '', role: 0, status: 0, order: '-id' }

/** Users: filters, ordering, paging, create/edit, quota changes, enable/disable, roles, delete. */
export function UsersPanel() {
  const { t } = useTranslation()
  const id = useId()
  const me = useUser()
  const isRoot = me?.role === ROLE.root
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }

  const [draft, setDraft] = useState<Filters>(EMPTY)
  const [params, setParams] = useState<UserListParams>({ ...EMPTY, page: 1, size: 10 })
  const users = useUsers(params)

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<ManagedUser | undefined>()
  const [quotaUser, setQuotaUser] = useState<ManagedUser | null>(null)
  const [deleting, setDeleting] = useState<ManagedUser | null>(null)
  // Promote, demote and disable change what someone may do: asked first.
  const [confirming, setConfirming] = useState<{ user: ManagedUser; action: 'promote' | 'demote' | 'disable' } | null>(null)
  const manage = useManageUser()

  const set = (key: keyof Filters) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [key]: key === 'role' || key === 'status' ? Number(e.target.value) : e.target.value }))

  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    setParams((p) => ({ ...p, ...draft, keyword: draft.keyword.trim(), group: draft.group.trim(), page: 1 }))
  }
  const onReset = () => {
    setDraft(EMPTY)
    setParams((p) => ({ ...p, ...EMPTY, page: 1 }))
  }

  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (u: ManagedUser) => {
    setEditing(u)
    setFormOpen(true)
  }

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
    if (!deleting) return
    run(deleting, 'delete', () => {
      setDeleting(null)
      if (params.page > 1 && users.data?.data.length === 1) setParams((p) => ({ ...p, page: p.page - 1 }))
    })
  }

  /** Administrators act on users below them; only root changes roles; nobody changes root. */
  const canManage = (u: ManagedUser) => (me?.role ?? 0) > u.role
  const rows = users.data?.data ?? []
  const total = users.data?.total_count ?? 0
  const filtered = params.keyword !== '' || params.group !== '' || params.role !== 0 || params.status !== 0

  return (
    <div className="grid grid-cols-1 gap-4">
      <Card>
        <CardContent className="p-4">
          <form
            onSubmit={onSearch}
            aria-label={t('users:filters.label')}
            className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3 xl:grid-cols-6"
            data-testid="user-filters"
          >
            <div className="grid gap-1.5 sm:col-span-2 lg:col-span-1 xl:col-span-2">
              <Label htmlFor={`${id}-keyword`}>{t('users:filters.keyword')}</Label>
              <Input
                id={`${id}-keyword`}
                value={draft.keyword}
                onChange={set('keyword')}
                placeholder={t('users:filters.keywordPlaceholder')}
                data-testid="user-filter-keyword"
              />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-group`}>{t('users:filters.group')}</Label>
              <Input id={`${id}-group`} value={draft.group} onChange={set('group')} data-testid="user-filter-group" />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-role`}>{t('users:filters.role')}</Label>
              <NativeSelect id={`${id}-role`} value={draft.role} onChange={set('role')} data-testid="user-filter-role">
                <option value={0}>{t('users:filters.any')}</option>
                <option value={ROLE.user}>{t('common:role.user')}</option>
                <option value={ROLE.admin}>{t('common:role.admin')}</option>
                <option value={ROLE.root}>{t('common:role.root')}</option>
              </NativeSelect>
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-status`}>{t('users:filters.status')}</Label>
              <NativeSelect id={`${id}-status`} value={draft.status} onChange={set('status')} data-testid="user-filter-status">
                <option value={0}>{t('users:filters.any')}</option>
                <option value={USER_STATUS.enabled}>{t('users:status.enabled')}</option>
                <option value={USER_STATUS.disabled}>{t('users:status.disabled')}</option>
              </NativeSelect>
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-order`}>{t('users:filters.order')}</Label>
              <NativeSelect id={`${id}-order`} value={draft.order} onChange={set('order')} data-testid="user-filter-order">
                {ORDERS.map((o) => (
                  <option key={o} value={o}>
                    {t(`users:order.${ORDER_KEYS[o]}`)}
                  </option>
                ))}
              </NativeSelect>
            </div>
            <div className="flex flex-wrap items-end gap-2 sm:col-span-2 lg:col-span-3 xl:col-span-6">
              <Button type="submit" data-testid="user-search">
                <SearchIcon />
                {t('common:actions.search')}
              </Button>
              <Button type="button" variant="outline" onClick={onReset}>
                <RotateCcwIcon />
                {t('common:actions.reset')}
              </Button>
              <Button type="button" onClick={openCreate} className="ml-auto" data-testid="user-create">
                <PlusIcon />
                {t('users:create')}
              </Button>
            </div>
          </form>
        </CardContent>
      </Card>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={users.isPending} query={users}
            empty={rows.length === 0}
            emptyText={filtered ? t('users:noMatch') : t('users:empty')}
            emptyTestId="users-empty"
          >
            <Table cards data-testid="users-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('users:columns.id')}</TableHead>
                  <TableHead>{t('users:columns.user')}</TableHead>
                  <TableHead>{t('users:columns.group')}</TableHead>
                  <TableHead>{t('users:columns.quota')}</TableHead>
                  <TableHead className="text-right">{t('users:columns.requests')}</TableHead>
                  <TableHead>{t('users:columns.role')}</TableHead>
                  <TableHead>{t('users:columns.status')}</TableHead>
                  <TableHead className="hidden 2xl:table-cell">{t('users:columns.createdAt')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('users:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((u) => {
                  const enabled = u.status === USER_STATUS.enabled
                  return (
                    <TableRow key={u.id} data-testid={`user-row-${u.id}`}>
                      <TableCell className="tabular-nums">{u.id}</TableCell>
                      <TableCell data-card="title">
                        <div className="font-medium" data-testid="user-username">
                          {u.username}
                        </div>
                        <div className="max-w-48 truncate text-xs text-muted-foreground">
                          {[u.display_name, u.email].filter(Boolean).join(' · ')}
                        </div>
                      </TableCell>
                      <TableCell>
                        <Badge variant="outline">{u.group}</Badge>
                      </TableCell>
                      <TableCell className="whitespace-nowrap">
                        <div data-testid="user-quota">{renderQuota(u.quota, display)}</div>
                        <div className="text-xs text-muted-foreground" data-testid="user-used">
                          {t('users:usedQuota', { amount: renderQuota(u.used_quota, display) })}
                        </div>
                        {u.aff_count > 0 && (
                          <div className="text-xs text-muted-foreground" data-testid="user-aff">
                            {t('users:invited', { count: u.aff_count, amount: renderQuota(u.aff_quota, display) })}
                          </div>
                        )}
                      </TableCell>
                      <TableCell className="text-right tabular-nums">{renderNumber(u.request_count)}</TableCell>
                      <TableCell>
                        <Badge variant={ROLE_VARIANT[u.role] ?? 'outline'} data-testid="user-role">
                          {t(`common:role.${roleKey(u.role)}`)}
                        </Badge>
                      </TableCell>
                      <TableCell>
                        <Badge variant={enabled ? 'success' : 'secondary'} data-testid="user-status">
                          {enabled ? t('users:status.enabled') : t('users:status.disabled')}
                        </Badge>
                      </TableCell>
                      <TableCell className="hidden whitespace-nowrap 2xl:table-cell">{formatTimestamp(u.created_at)}</TableCell>
                      <TableCell data-card="actions">
                        {canManage(u) ? (
                          <div className="flex justify-end gap-1">
                            <RowAction label={t('common:actions.edit')} onClick={() => openEdit(u)} testId="user-edit">
                              <PencilIcon />
                            </RowAction>
                            <RowAction label={t('users:actions.quota')} onClick={() => setQuotaUser(u)} testId="user-quota-action">
                              <CoinsIcon />
                            </RowAction>
                            <RowAction
                              label={enabled ? t('common:actions.disable') : t('common:actions.enable')}
                              onClick={() => (enabled ? setConfirming({ user: u, action: 'disable' }) : run(u, 'enable'))}
                              disabled={manage.isPending}
                              testId="user-toggle"
                            >
                              {enabled ? <PowerOffIcon /> : <PowerIcon />}
                            </RowAction>
                            {isRoot &&
                              (u.role === ROLE.admin ? (
                                <RowAction
                                  label={t('users:actions.demote')}
                                  onClick={() => setConfirming({ user: u, action: 'demote' })}
                                  disabled={manage.isPending}
                                  testId="user-demote"
                                >
                                  <ShieldMinusIcon />
                                </RowAction>
                              ) : (
                                <RowAction
                                  label={t('users:actions.promote')}
                                  onClick={() => setConfirming({ user: u, action: 'promote' })}
                                  disabled={manage.isPending}
                                  testId="user-promote"
                                >
                                  <ShieldPlusIcon />
                                </RowAction>
                              ))}
                            <RowAction
                              label={t('common:actions.delete')}
                              onClick={() => setDeleting(u)}
                              testId="user-delete"
                              className="text-destructive hover:text-destructive"
                            >
                              <Trash2Icon />
                            </RowAction>
                          </div>
                        ) : (
                          <p className="text-right text-xs whitespace-nowrap text-muted-foreground">{t('users:protected')}</p>
                        )}
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

      <UserFormDialog open={formOpen} onOpenChange={setFormOpen} user={editing} canCreateAdmin={isRoot} />
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
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('users:delete.title')}
        description={t('users:delete.description', { name: deleting?.username ?? '' })}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={manage.isPending}
        testId="user-delete-dialog"
      />
    </div>
  )
}
