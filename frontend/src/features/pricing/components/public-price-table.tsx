import { useTranslation } from 'react-i18next'
import { DataTable, sortRows } from '@/components/data-table'
import { useModelOwners, usePrices } from '../api/queries'
import type { Price } from '../types'
import { priceColumns } from './price-cells'
import { matchesView, PriceToolbar, usePriceList } from './price-toolbar'

/** The public price list (GET /api/prices), searchable, in dollars or yuan. */
export function PublicPriceTable() {
  const { t } = useTranslation()
  const prices = usePrices()
  const owners = useModelOwners()
  const { view, toolbar, sort } = usePriceList<Price>()
  const all = prices.data ?? []
  const usedOwners = (owners.data ?? []).filter((o) => all.some((p) => p.channel_type === o.id))
  const c = priceColumns<Price>(t, { priced: (p) => ({ model: p.model, price: p }), owners: owners.data, view, inputTestId: 'public-price-input' })
  const columns = [c.model, c.owner, c.type, c.input, c.output]
  const rows = sortRows(
    all.filter((p) => matchesView(view, p.model, p.channel_type)),
    columns,
    sort.value,
  )

  return (
    <div className="grid grid-cols-1 gap-4">
      <PriceToolbar {...toolbar} owners={usedOwners} />
      <DataTable
        name="public-price"
        testId="public-price-table"
        emptyTestId="public-price-empty"
        columns={columns}
        query={prices}
        rows={rows}
        rowKey={(p) => p.model}
        sort={sort}
        emptyText={all.length === 0 ? t('pricing:public.empty') : t('pricing:noMatch')}
      />
    </div>
  )
}
