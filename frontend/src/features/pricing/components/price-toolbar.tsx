import { useTranslation } from 'react-i18next'
import { SearchInput } from '@/components/filter-bar'
import { NativeSelect } from '@/components/ui/native-select'
import { useListScreen } from '@/hooks/use-list-screen'
import type { PriceCurrency } from '../price-format'
import type { ModelOwner } from '../types'

export interface PriceView {
  keyword: string
  owner: string
  currency: PriceCurrency
  per1M: boolean
}

/** The price pages' filters in the address bar, and their order (by model name). */
const PRICE_FILTERS = { keyword: '', owner: '', currency: 'usd', per1M: false, order: 'model' }

const viewOf = (f: typeof PRICE_FILTERS): PriceView => ({
  keyword: f.keyword,
  owner: f.owner,
  currency: f.currency === 'cny' ? 'cny' : 'usd',
  per1M: f.per1M,
})

/**
 * A price page's state: its view (search, owner, currency, unit) and order kept in the address
 * bar as they change, what the toolbar takes, and the list screen's dialogs.
 */
export function usePriceList<T>() {
  const list = useListScreen<T, typeof PRICE_FILTERS>({ filters: PRICE_FILTERS, orderKeys: ['order'] })
  return {
    list,
    view: viewOf(list.filters),
    toolbar: { view: viewOf(list.draft), onChange: (v: PriceView) => list.setFilters(v, { replace: true }) },
    sort: { value: list.filters.order, onChange: (order: string) => list.setFilters({ order }) },
  }
}

/** Search, owner filter, currency and unit: shared by the price pages. */
export function PriceToolbar({
  view,
  onChange,
  owners,
}: {
  view: PriceView
  onChange: (view: PriceView) => void
  owners: ModelOwner[]
}) {
  const { t } = useTranslation()
  return (
    <div className="flex flex-wrap items-center gap-2">
      <SearchInput
        icon
        className="w-full sm:w-auto sm:max-w-xs sm:flex-1"
        value={view.keyword}
        onChange={(e) => onChange({ ...view, keyword: e.target.value })}
        placeholder={t('pricing:search')}
        data-testid="price-search"
      />
      <NativeSelect
        className="w-auto"
        value={view.owner}
        onChange={(e) => onChange({ ...view, owner: e.target.value })}
        aria-label={t('pricing:columns.owner')}
        data-testid="price-owner-filter"
      >
        <option value="">{t('pricing:allOwners')}</option>
        {owners.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </NativeSelect>
      <NativeSelect
        className="w-auto"
        value={view.currency}
        onChange={(e) => onChange({ ...view, currency: e.target.value as PriceCurrency })}
        aria-label={t('pricing:currency.label')}
        data-testid="price-currency"
      >
        <option value="usd">{t('pricing:currency.usd')}</option>
        <option value="cny">{t('pricing:currency.cny')}</option>
      </NativeSelect>
      <NativeSelect
        className="w-auto"
        value={view.per1M ? '1m' : '1k'}
        onChange={(e) => onChange({ ...view, per1M: e.target.value === '1m' })}
        aria-label={t('pricing:unit.label')}
        data-testid="price-unit"
      >
        <option value="1k">{t('pricing:unit.per1K')}</option>
        <option value="1m">{t('pricing:unit.per1M')}</option>
      </NativeSelect>
    </div>
  )
}

/** Whether a row passes the keyword and owner filters. */
export function matchesView(view: PriceView, model: string, channelType: number | undefined): boolean {
  const kw = view.keyword.trim().toLowerCase()
  if (kw && !model.toLowerCase().includes(kw)) return false
  if (view.owner && String(channelType) !== view.owner) return false
  return true
}
