import { WebhookIcon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { FilterBar, SearchInput } from '@/components/filter-bar'
import { GatewayIcon } from '@/components/gateway-icon'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction, RowAction, TitleCell } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Switch } from '@/components/ui/switch'
import { useListScreen } from '@/hooks/use-list-screen'
import { formatFees } from '@/lib/money'
import { notify } from '@/lib/toast'
import { useDeleteGateway } from '../api/delete-gateway'
import { useGateways } from '../api/get-gateways'
import { useUpdateGateway } from '../api/update-gateway'
import { gatewayPayloadOf } from '../schemas'
import { GATEWAY_TYPES, type Gateway } from '../types'
import { GatewayFormDialog } from './gateway-form-dialog'
import { StripeWebhookDialog } from './stripe-webhook'

const FILTERS = { keyword: '' }
const TRUNCATED = 'max-w-48 truncate font-mono text-xs text-muted-foreground'

/** Payment gateways: search, paging, create/edit, enable/disable, delete; a Stripe gateway's webhook address. */
export function GatewaysPanel() {
  const { t } = useTranslation()
  const list = useListScreen<Gateway, typeof FILTERS>({ filters: FILTERS, prefix: 'gateway_' })
  const gateways = useGateways(list.params)
  const rows = gateways.data?.data ?? []
  const [webhookOf, setWebhookOf] = useState<Gateway | null>(null)
  const updateMutation = useUpdateGateway()
  const deleteMutation = useDeleteGateway()

  // The row's own fields with the stored secrets kept (sent as ""), only `enable` changed.
  const toggle = (g: Gateway, enable: boolean) =>
    updateMutation.mutate(
      { ...gatewayPayloadOf(g), enable },
      { onSuccess: () => notify.success(enable ? t('payment:toast.enabled') : t('payment:toast.disabled')) },
    )

  const columns: Column<Gateway>[] = [
    {
      id: 'name',
      header: t('payment:columns.name'),
      card: 'title',
      essential: true,
      cell: (g) => (
        <div className="flex items-center gap-2">
          <GatewayIcon icon={g.icon} />
          <div className="min-w-0">
            <TitleCell text={g.name} testId="gateway-name" sub={g.uuid} subTitle={g.uuid} subClassName={TRUNCATED} />
          </div>
        </div>
      ),
    },
    {
      id: 'type',
      header: t('payment:columns.type'),
      cell: (g) => (
        <Badge variant="outline">{(GATEWAY_TYPES as readonly string[]).includes(g.type) ? t(`payment:types.${g.type}`) : g.type}</Badge>
      ),
    },
    { id: 'currency', header: t('payment:columns.currency'), testId: 'gateway-currency', cell: (g) => g.currency },
    {
      id: 'fees',
      header: t('payment:columns.fees'),
      className: 'whitespace-nowrap',
      cellClassName: 'tabular-nums',
      testId: 'gateway-fees',
      cell: (g) => formatFees(g) ?? t('payment:fees.none'),
    },
    {
      id: 'enable',
      header: t('payment:columns.enable'),
      cell: (g) => (
        <Switch
          checked={g.enable}
          onCheckedChange={(checked) => toggle(g, checked)}
          disabled={updateMutation.isPending}
          aria-label={g.enable ? t('common:actions.disable') : t('common:actions.enable')}
          data-testid="gateway-toggle"
        />
      ),
    },
    { id: 'sort', header: t('payment:columns.sort'), right: true, cellClassName: 'tabular-nums', cell: (g) => g.sort },
    actionsColumn(t('payment:columns.actions'), (g) => (
      <>
        {g.type === 'stripe' && (
          <RowAction label={t('payment:webhook.action')} onClick={() => setWebhookOf(g)} testId="gateway-webhook">
            <WebhookIcon />
          </RowAction>
        )}
        <EditAction onClick={() => list.form.edit(g)} testId="gateway-edit" />
        <DeleteAction onClick={() => list.setDeleting(g)} testId="gateway-delete" />
      </>
    )),
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        onSearch={list.search}
        actions={<CreateButton label={t('payment:create')} onClick={list.form.create} testId="gateway-create" />}
      >
        <SearchInput {...list.bind('keyword')} placeholder={t('payment:search.placeholder')} data-testid="gateway-search" />
      </FilterBar>

      <DataTable name="gateway" columns={columns} query={gateways} list={list} settings emptyText={list.filtered ? t('payment:noMatch') : t('payment:empty')} />

      <GatewayFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} gateway={list.form.editing} />
      <StripeWebhookDialog gateway={webhookOf} onOpenChange={(open) => !open && setWebhookOf(null)} />
      <ConfirmDialog
        {...list.deleteDialog}
        title={t('payment:delete.title')}
        description={t('payment:delete.description', { name: list.deleting?.name ?? '' })}
        onConfirm={list.confirmDelete((g, done) => deleteMutation.mutate(g.id, done), t('payment:toast.deleted'), rows.length)}
        pending={deleteMutation.isPending}
        testId="gateway-delete-dialog"
      />
    </div>
  )
}
