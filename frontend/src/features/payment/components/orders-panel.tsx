import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '@/components/data-table'
import { FilterBar, SearchInput } from '@/components/filter-bar'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { NativeSelect } from '@/components/ui/native-select'
import { useListScreen } from '@/hooks/use-list-screen'
import { formatTimestamp, renderQuota } from '@/lib/format'
import { discountOff, formatMoney } from '@/lib/money'
import { useQuotaDisplay } from '@/stores/site'
import { useOrders } from '../api/get-orders'
import { ORDER_STATUSES, type Order, type OrderStatus } from '../types'

const STATUS_VARIANT: Record<OrderStatus, BadgeVariant> = {
  pending: 'warning',
  paid: 'success',
  paid_late: 'success',
  expired: 'secondary',
  failed: 'destructive',
}

const FILTERS = { trade_no: '', user_id: '', status: '' }
const isStatus = (s: string): s is OrderStatus => (ORDER_STATUSES as readonly string[]).includes(s)

/** The order log: every user's top-up orders, newest first, by trade number, user and status. */
export function OrdersPanel() {
  const { t } = useTranslation()
  const display = useQuotaDisplay()
  const list = useListScreen<Order, typeof FILTERS>({ filters: FILTERS, prefix: 'order_' })
  const { status } = list.filters
  const orders = useOrders({ ...list.params, status: isStatus(status) ? status : '' })
  const userIdValid = /^\d*$/.test(list.draft.user_id.trim())

  const columns: Column<Order>[] = [
    {
      id: 'tradeNo',
      header: t('payment:orders.columns.tradeNo'),
      card: 'title',
      essential: true,
      cell: (o) => (
        <>
          <div className="font-mono text-sm" data-testid="order-trade-no-cell">
            {o.trade_no}
          </div>
          {o.gateway_no && (
            <div className="max-w-48 truncate font-mono text-xs text-muted-foreground" title={o.gateway_no}>
              {o.gateway_no}
            </div>
          )}
        </>
      ),
    },
    {
      id: 'user',
      header: t('payment:orders.columns.user'),
      cell: (o) => (
        <>
          {o.username} <span className="text-xs text-muted-foreground">#{o.user_id}</span>
        </>
      ),
    },
    { id: 'gateway', header: t('payment:orders.columns.gateway'), cell: (o) => o.gateway_name },
    {
      id: 'amount',
      header: t('payment:orders.columns.amount'),
      right: true,
      cellClassName: 'tabular-nums',
      cell: (o) => {
        const off = discountOff(o.discount)
        return (
          <>
            <div>{formatMoney(o.amount, 'USD')}</div>
            {off && <div className="text-xs text-muted-foreground">{t('payment:orders.discount', { off })}</div>}
          </>
        )
      },
    },
    {
      id: 'paid',
      header: t('payment:orders.columns.paid'),
      right: true,
      cellClassName: 'tabular-nums',
      testId: 'order-paid-amount',
      cell: (o) => (
        <>
          <div>{formatMoney(o.order_amount, o.currency)}</div>
          <div className="text-xs text-muted-foreground">{t('payment:orders.fee', { fee: formatMoney(o.fee, o.currency) })}</div>
        </>
      ),
    },
    { id: 'quota', header: t('payment:orders.columns.quota'), right: true, cellClassName: 'tabular-nums', cell: (o) => renderQuota(o.quota, display) },
    {
      id: 'status',
      header: t('payment:orders.columns.status'),
      cell: (o) => (
        <Badge variant={isStatus(o.status) ? STATUS_VARIANT[o.status] : 'outline'} data-testid="order-status">
          {isStatus(o.status) ? t(`payment:orders.status.${o.status}`) : o.status}
        </Badge>
      ),
    },
    { id: 'created', header: t('payment:orders.columns.createdAt'), className: 'whitespace-nowrap', cell: (o) => formatTimestamp(o.created_at) },
    {
      id: 'paidAt',
      header: t('payment:orders.columns.paidAt'),
      className: 'whitespace-nowrap',
      cell: (o) => (o.paid_at ? formatTimestamp(o.paid_at) : t('payment:orders.notPaid')),
    },
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        onSearch={(e) => (userIdValid ? list.search(e) : e.preventDefault())}
        submitDisabled={!userIdValid}
        className="flex flex-wrap gap-2 lg:max-w-3xl"
        testId="order-filters"
        notice={
          !userIdValid && (
            <p className="w-full text-sm text-destructive" role="alert">
              {t('payment:orders.userIdInvalid')}
            </p>
          )
        }
      >
        <SearchInput
          {...list.bind('trade_no')}
          placeholder={t('payment:orders.tradeNo')}
          className="w-full font-mono sm:w-auto sm:min-w-48 sm:flex-1"
          data-testid="order-trade-no"
        />
        <SearchInput
          {...list.bind('user_id')}
          placeholder={t('payment:orders.userId')}
          aria-invalid={!userIdValid}
          inputMode="numeric"
          className="flex-1 sm:w-32 sm:flex-none"
          data-testid="order-user-id"
        />
        <NativeSelect
          value={status}
          onChange={(e) => list.setFilters({ status: e.target.value })}
          aria-label={t('payment:orders.columns.status')}
          className="flex-1 sm:w-32 sm:flex-none"
          data-testid="order-status-filter"
        >
          <option value="">{t('payment:orders.status.all')}</option>
          {ORDER_STATUSES.map((s) => (
            <option key={s} value={s}>
              {t(`payment:orders.status.${s}`)}
            </option>
          ))}
        </NativeSelect>
      </FilterBar>

      <DataTable name="order" columns={columns} query={orders} list={list} settings emptyText={list.filtered ? t('payment:orders.noMatch') : t('payment:orders.empty')} />
    </div>
  )
}
