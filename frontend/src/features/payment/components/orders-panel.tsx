import { SearchIcon } from 'lucide-react'
import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ListState } from '@/components/list-kit'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatTimestamp, renderQuota } from '@/lib/format'
import { discountOff, formatMoney } from '@/lib/money'
import { useSiteInfo } from '@/stores/site'
import type { OrderListParams } from '../api/keys'
import { useOrders } from '../api/get-orders'
import { ORDER_STATUSES, type OrderStatus } from '../types'

const STATUS_VARIANT: Record<OrderStatus, BadgeVariant> = {
  pending: 'warning',
  paid: 'success',
  paid_late: 'success',
  expired: 'secondary',
  failed: 'destructive',
}

/** The order log: every user's top-up orders, newest first, by trade number, user and status. */
export function OrdersPanel() {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const [params, setParams] = useState<OrderListParams>({ page: 1, size: 10, trade_no: '', user_id: '', status: '' })
  const [tradeNoInput, setTradeNoInput] = useState('')
  const [userIdInput, setUserIdInput] = useState('')
  const list = useOrders(params)

  const userIdValid = /^\d*$/.test(userIdInput.trim())
  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    if (!userIdValid) return
    setParams((p) => ({ ...p, page: 1, trade_no: tradeNoInput.trim(), user_id: userIdInput.trim() }))
  }

  const rows = list.data?.data ?? []
  const total = list.data?.total_count ?? 0
  const filtered = params.trade_no !== '' || params.user_id !== '' || params.status !== ''

  return (
    <div className="grid grid-cols-1 gap-4">
      <form onSubmit={onSearch} className="flex flex-wrap gap-2 lg:max-w-3xl" role="search" data-testid="order-filters">
        <Input
          value={tradeNoInput}
          onChange={(e) => setTradeNoInput(e.target.value)}
          placeholder={t('payment:orders.tradeNo')}
          aria-label={t('payment:orders.tradeNo')}
          className="w-full font-mono sm:w-auto sm:min-w-48 sm:flex-1"
          data-testid="order-trade-no"
        />
        <Input
          value={userIdInput}
          onChange={(e) => setUserIdInput(e.target.value)}
          placeholder={t('payment:orders.userId')}
          aria-label={t('payment:orders.userId')}
          aria-invalid={!userIdValid}
          inputMode="numeric"
          className="flex-1 sm:w-32 sm:flex-none"
          data-testid="order-user-id"
        />
        <NativeSelect
          value={params.status}
          onChange={(e) => setParams((p) => ({ ...p, page: 1, status: e.target.value as OrderStatus | '' }))}
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
        <Button type="submit" variant="outline" disabled={!userIdValid}>
          <SearchIcon />
          {t('common:actions.search')}
        </Button>
        {!userIdValid && (
          <p className="w-full text-sm text-destructive" role="alert">
            {t('payment:orders.userIdInvalid')}
          </p>
        )}
      </form>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={list.isPending}
            query={list}
            empty={rows.length === 0}
            emptyText={filtered ? t('payment:orders.noMatch') : t('payment:orders.empty')}
            emptyTestId="orders-empty"
          >
            <Table cards data-testid="orders-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('payment:orders.columns.tradeNo')}</TableHead>
                  <TableHead>{t('payment:orders.columns.user')}</TableHead>
                  <TableHead>{t('payment:orders.columns.gateway')}</TableHead>
                  <TableHead className="text-right">{t('payment:orders.columns.amount')}</TableHead>
                  <TableHead className="text-right">{t('payment:orders.columns.paid')}</TableHead>
                  <TableHead className="text-right">{t('payment:orders.columns.quota')}</TableHead>
                  <TableHead>{t('payment:orders.columns.status')}</TableHead>
                  <TableHead>{t('payment:orders.columns.createdAt')}</TableHead>
                  <TableHead>{t('payment:orders.columns.paidAt')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((o) => {
                  const off = discountOff(o.discount)
                  const known = (ORDER_STATUSES as readonly string[]).includes(o.status)
                  return (
                    <TableRow key={o.id} data-testid={`order-row-${o.id}`}>
                      <TableCell data-card="title">
                        <div className="font-mono text-sm" data-testid="order-trade-no-cell">
                          {o.trade_no}
                        </div>
                        {o.gateway_no && (
                          <div className="max-w-48 truncate font-mono text-xs text-muted-foreground" title={o.gateway_no}>
                            {o.gateway_no}
                          </div>
                        )}
                      </TableCell>
                      <TableCell>
                        {o.username} <span className="text-xs text-muted-foreground">#{o.user_id}</span>
                      </TableCell>
                      <TableCell>{o.gateway_name}</TableCell>
                      <TableCell className="text-right tabular-nums">
                        <div>{formatMoney(o.amount, 'USD')}</div>
                        {off && (
                          <div className="text-xs text-muted-foreground">{t('payment:orders.discount', { off })}</div>
                        )}
                      </TableCell>
                      <TableCell className="text-right tabular-nums" data-testid="order-paid-amount">
                        <div>{formatMoney(o.order_amount, o.currency)}</div>
                        <div className="text-xs text-muted-foreground">
                          {t('payment:orders.fee', { fee: formatMoney(o.fee, o.currency) })}
                        </div>
                      </TableCell>
                      <TableCell className="text-right tabular-nums">{renderQuota(o.quota, display)}</TableCell>
                      <TableCell>
                        <Badge variant={known ? STATUS_VARIANT[o.status] : 'outline'} data-testid="order-status">
                          {known ? t(`payment:orders.status.${o.status}`) : o.status}
                        </Badge>
                      </TableCell>
                      <TableCell className="whitespace-nowrap">{formatTimestamp(o.created_at)}</TableCell>
                      <TableCell className="whitespace-nowrap">
                        {o.paid_at ? formatTimestamp(o.paid_at) : t('payment:orders.notPaid')}
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
    </div>
  )
}
