import { useTranslation } from 'react-i18next'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { TOKEN_STATUS } from '@/types/api'

const STATUS: Record<number, { key: 'enabled' | 'disabled' | 'expired' | 'exhausted'; variant: BadgeVariant }> = {
  [TOKEN_STATUS.enabled]: { key: 'enabled', variant: 'success' },
  [TOKEN_STATUS.disabled]: { key: 'disabled', variant: 'secondary' },
  [TOKEN_STATUS.expired]: { key: 'expired', variant: 'warning' },
  [TOKEN_STATUS.exhausted]: { key: 'exhausted', variant: 'destructive' },
}

/** 1 enabled, 2 disabled, 3 expired, 4 exhausted. */
export function TokenStatusBadge({ status }: { status: number }) {
  const { t } = useTranslation()
  const s = STATUS[status]
  return (
    <Badge variant={s?.variant ?? 'outline'} data-testid="token-status">
      {s ? t(`tokens:status.${s.key}`) : t('tokens:status.unknown')}
    </Badge>
  )
}
