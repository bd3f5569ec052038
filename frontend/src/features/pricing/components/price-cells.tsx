import { LockIcon } from 'lucide-react'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import type { Column } from '@/components/data-table'
import { Badge } from '@/components/ui/badge'
import { priceValue, type PriceCurrency } from '../price-format'
import type { ModelOwner, PriceType } from '../types'
import type { PriceView } from './price-toolbar'

/** A ratio as money, or "Free" at 0; per 1K/1M tokens, or per call for `times`. */
export function PriceText({
  ratio,
  type,
  currency,
  per1M,
}: {
  ratio: number
  type: PriceType
  currency: PriceCurrency
  per1M: boolean
}) {
  const { t } = useTranslation()
  const value = priceValue(ratio, currency, type === 'tokens' && per1M)
  if (value === null) return <span className="text-emerald-600 dark:text-emerald-400">{t('pricing:free')}</span>
  const unit = type === 'times' ? t('pricing:unit.call') : per1M ? t('pricing:unit.per1M') : t('pricing:unit.per1K')
  return (
    <span className="whitespace-nowrap tabular-nums">
      {value}
      <span className="text-xs text-muted-foreground"> / {unit}</span>
    </span>
  )
}

export function PriceTypeBadge({ type }: { type: PriceType }) {
  const { t } = useTranslation()
  return <Badge variant={type === 'times' ? 'warning' : 'secondary'}>{t(`pricing:type.${type}`)}</Badge>
}

export function LockedMark({ locked }: { locked: boolean }) {
  const { t } = useTranslation()
  if (!locked) return null
  return (
    <span title={t('pricing:locked')} aria-label={t('pricing:locked')} className="inline-flex text-amber-600">
      <LockIcon className="size-3.5" />
    </span>
  )
}

/** The owner's name for a channel type (its number when unknown). */
export function ownerName(owners: ModelOwner[] | undefined, id: number): string {
  return owners?.find((o) => o.id === id)?.name ?? `#${id}`
}

/** What the price columns read of a row: its model, and its price when it has one. */
interface PricedRow {
  model: string
  price: { type: PriceType; channel_type: number; input: number; output: number } | null
}

/**
 * The columns every price list shows: model (sortable by name), owner, type, and input and
 * output prices in the view's currency and unit (times `ratio`); a row without a price says so
 * across type and prices.
 */
export function priceColumns<R>(
  t: (key: 'pricing:columns.model' | 'pricing:columns.owner' | 'pricing:columns.type' | 'pricing:columns.input' | 'pricing:columns.output') => string,
  {
    priced,
    owners,
    view,
    ratio = 1,
    unpriced,
    modelCell,
    inputTestId,
  }: {
    priced: (row: R) => PricedRow
    owners: ModelOwner[] | undefined
    view: PriceView
    ratio?: number
    /** What a row without a price shows. */
    unpriced?: ReactNode
    modelCell?: (row: R) => ReactNode
    inputTestId?: string
  },
) {
  const price = (r: R) => priced(r).price
  const text = (ratioOf: number, type: PriceType) => <PriceText ratio={ratioOf * ratio} type={type} currency={view.currency} per1M={view.per1M} />
  const model: Column<R> = {
    id: 'model',
    header: t('pricing:columns.model'),
    card: 'title',
    essential: true,
    className: 'font-medium whitespace-nowrap',
    sortBy: ['model', '-model'],
    sortValue: (r) => priced(r).model,
    cell: (r) => modelCell?.(r) ?? priced(r).model,
  }
  const owner: Column<R> = {
    id: 'owner',
    header: t('pricing:columns.owner'),
    cell: (r) => {
      const p = price(r)
      return p ? ownerName(owners, p.channel_type) : '-'
    },
  }
  const type: Column<R> = {
    id: 'type',
    header: t('pricing:columns.type'),
    span: (r) => (price(r) ? undefined : 3),
    cell: (r) => {
      const p = price(r)
      return p ? <PriceTypeBadge type={p.type} /> : unpriced
    },
  }
  const input: Column<R> = {
    id: 'input',
    header: t('pricing:columns.input'),
    testId: inputTestId,
    cell: (r) => {
      const p = price(r)
      return p && text(p.input, p.type)
    },
  }
  const output: Column<R> = {
    id: 'output',
    header: t('pricing:columns.output'),
    cell: (r) => {
      const p = price(r)
      return p?.type === 'tokens' ? text(p.output, 'tokens') : '-'
    },
  }
  return { model, owner, type, input, output }
}
