import { PencilIcon, PlusIcon, SearchIcon, Trash2Icon, WebhookIcon } from 'lucide-react'
import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { GatewayIcon } from '@/components/gateway-icon'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Switch } from '@/components/ui/switch'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatFees } from '@/lib/money'
import { notify } from '@/lib/toast'
import { useDeleteGateway } from '../api/delete-gateway'
import { useGateways } from '../api/get-gateways'
import { useUpdateGateway } from '../api/update-gateway'
import { gatewayPayloadOf } from '../schemas'
import { GATEWAY_TYPES, type Gateway } from '../types'
import { GatewayFormDialog } from './gateway-form-dialog'
import { StripeWebhookDialog } from './stripe-webhook'

/** Payment gateways: search, paging, create/edit, enable/disable, delete; a Stripe gateway's webhook address. */
export function GatewaysPanel() {
  const { t } = useTranslation()
  const [params, setParams] = useState({ page: 1, size: 10, keyword: '' })
  const [keywordInput, setKeywordInput] = useState('')
  const list = useGateways(params)

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<Gateway | undefined>()
  const [deleting, setDeleting] = useState<Gateway | null>(null)
  const [webhookOf, setWebhookOf] = useState<Gateway | null>(null)
  const updateMutation = useUpdateGateway()
  const deleteMutation = useDeleteGateway()

  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    setParams((p) => ({ ...p, page: 1, keyword: keywordInput.trim() }))
  }
  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (g: Gateway) => {
    setEditing(g)
    setFormOpen(true)
  }
  // The row's own fields with the stored secrets kept (sent as ""), only `enable` changed.
  const toggle = (g: Gateway, enable: boolean) =>
    updateMutation.mutate(
      { ...gatewayPayloadOf(g), enable },
      { onSuccess: () => notify.success(enable ? t('payment:toast.enabled') : t('payment:toast.disabled')) },
    )
  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting.id, {
      onSuccess: () => {
        notify.success(t('payment:toast.deleted'))
        setDeleting(null)
        if (params.page > 1 && list.data?.data.length === 1) setParams((p) => ({ ...p, page: p.page - 1 }))
      },
    })
  }

  const rows = list.data?.data ?? []
  const total = list.data?.total_count ?? 0

  return (
    <div className="grid grid-cols-1 gap-4">
      <div className="flex flex-wrap items-center gap-2">
        <form onSubmit={onSearch} className="flex min-w-0 flex-1 gap-2 sm:max-w-md" role="search">
          <Input
            value={keywordInput}
            onChange={(e) => setKeywordInput(e.target.value)}
            placeholder={t('payment:search.placeholder')}
            aria-label={t('payment:search.placeholder')}
            data-testid="gateway-search"
          />
          <Button type="submit" variant="outline">
            <SearchIcon />
            {t('common:actions.search')}
          </Button>
        </form>
        <Button onClick={openCreate} className="ml-auto" data-testid="gateway-create">
          <PlusIcon />
          {t('payment:create')}
        </Button>
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={list.isPending}
            query={list}
            empty={rows.length === 0}
            emptyText={params.keyword ? t('payment:noMatch') : t('payment:empty')}
            emptyTestId="gateways-empty"
          >
            <Table cards data-testid="gateways-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('payment:columns.name')}</TableHead>
                  <TableHead>{t('payment:columns.type')}</TableHead>
                  <TableHead>{t('payment:columns.currency')}</TableHead>
                  <TableHead>{t('payment:columns.fees')}</TableHead>
                  <TableHead>{t('payment:columns.enable')}</TableHead>
                  <TableHead className="text-right">{t('payment:columns.sort')}</TableHead>
                  <TableHead data-card="actions" className="text-right">
                    {t('payment:columns.actions')}
                  </TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((g) => (
                  <TableRow key={g.id} data-testid={`gateway-row-${g.id}`}>
                    <TableCell data-card="title">
                      <div className="flex items-center gap-2">
                        <GatewayIcon icon={g.icon} />
                        <div className="min-w-0">
                          <div className="font-medium" data-testid="gateway-name">
                            {g.name}
                          </div>
                          <div className="max-w-48 truncate font-mono text-xs text-muted-foreground" title={g.uuid}>
                            {g.uuid}
                          </div>
                        </div>
                      </div>
                    </TableCell>
                    <TableCell>
                      <Badge variant="outline">
                        {(GATEWAY_TYPES as readonly string[]).includes(g.type) ? t(`payment:types.${g.type}`) : g.type}
                      </Badge>
                    </TableCell>
                    <TableCell data-testid="gateway-currency">{g.currency}</TableCell>
                    <TableCell className="whitespace-nowrap tabular-nums" data-testid="gateway-fees">
                      {formatFees(g) ?? t('payment:fees.none')}
                    </TableCell>
                    <TableCell>
                      <Switch
                        checked={g.enable}
                        onCheckedChange={(checked) => toggle(g, checked)}
                        disabled={updateMutation.isPending}
                        aria-label={g.enable ? t('common:actions.disable') : t('common:actions.enable')}
                        data-testid="gateway-toggle"
                      />
                    </TableCell>
                    <TableCell className="text-right tabular-nums">{g.sort}</TableCell>
                    <TableCell data-card="actions">
                      <div className="flex justify-end gap-1">
                        {g.type === 'stripe' && (
                          <RowAction label={t('payment:webhook.action')} onClick={() => setWebhookOf(g)} testId="gateway-webhook">
                            <WebhookIcon />
                          </RowAction>
                        )}
                        <RowAction label={t('common:actions.edit')} onClick={() => openEdit(g)} testId="gateway-edit">
                          <PencilIcon />
                        </RowAction>
                        <RowAction
                          label={t('common:actions.delete')}
                          onClick={() => setDeleting(g)}
                          testId="gateway-delete"
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

      <GatewayFormDialog open={formOpen} onOpenChange={setFormOpen} gateway={editing} />
      <StripeWebhookDialog gateway={webhookOf} onOpenChange={(open) => !open && setWebhookOf(null)} />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('payment:delete.title')}
        description={t('payment:delete.description', { name: deleting?.name ?? '' })}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="gateway-delete-dialog"
      />
    </div>
  )
}
