import { useTranslation } from 'react-i18next'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import type { LogEntry } from '@/types/api'
import { parseCostMeta } from '../breakdown'

export type LogTypeKey = 'all' | 'recharge' | 'consume' | 'manage' | 'system' | 'error'
export const LOG_TYPES: { value: number; key: LogTypeKey; variant: BadgeVariant }[] = [
  { value: 0, key: 'all', variant: 'outline' },
  { value: 1, key: 'recharge', variant: 'success' },
  { value: 2, key: 'consume', variant: 'default' },
  { value: 3, key: 'manage', variant: 'warning' },
  { value: 4, key: 'system', variant: 'secondary' },
  { value: 5, key: 'error', variant: 'destructive' },
]

/** The type of a log as a badge; an error log also shows the status the client got. */
export function LogTypeBadge({ log }: { log: Pick<LogEntry, 'type' | 'metadata'> }) {
  const { t } = useTranslation()
  const type = LOG_TYPES.find((x) => x.value === log.type && x.value !== 0)
  const status = log.type === 5 ? parseCostMeta(log.metadata).status : undefined
  return (
    <Badge variant={type?.variant ?? 'outline'} data-testid="log-type">
      {type ? t(`logs:types.${type.key}`) : t('logs:types.unknown')}
      {status !== undefined && ` ${status}`}
    </Badge>
  )
}
