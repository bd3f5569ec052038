import { DatabaseZapIcon } from 'lucide-react'
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

/** Marks a log answered from the response cache (no upstream call); nothing otherwise. */
export function CacheHitBadge({ log, className }: { log: Pick<LogEntry, 'cache_hit'>; className?: string }) {
  const { t } = useTranslation()
  if (!log.cache_hit) return null
  return (
    <Badge variant="success" className={className} title={t('logs:cacheHitHint')} data-testid="log-cache-hit">
      <DatabaseZapIcon className="size-3" aria-hidden />
      {t('logs:cacheHit')}
    </Badge>
  )
}

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
