import { SearchIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import type { PriceCurrency } from '../price-format'
import type { ModelOwner } from '../types'

export interface PriceView {
  keyword: string
  owner: string
  currency: PriceCurrency
  per1M: boolean
}

export const DEFAULT_VIEW: PriceView = { keyword: '', owner: '', currency: 'usd', per1M: false }

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
      <div className="relative w-full min-w-0 sm:w-auto sm:max-w-xs sm:flex-1">
        <SearchIcon className="pointer-events-none absolute top-2.5 left-2.5 size-4 text-muted-foreground" />
        <Input
          className="pl-8"
          value={view.keyword}
          onChange={(e) => onChange({ ...view, keyword: e.target.value })}
          placeholder={t('pricing:search')}
          aria-label={t('pricing:search')}
          data-testid="price-search"
        />
      </div>
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
