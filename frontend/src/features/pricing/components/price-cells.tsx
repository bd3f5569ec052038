import { LockIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Badge } from '@/components/ui/badge'
import { priceValue, type PriceCurrency } from '../price-format'
import type { ModelOwner, PriceType } from '../types'

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
