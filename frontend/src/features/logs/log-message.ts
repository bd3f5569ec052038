import type { TFunction } from 'i18next'
import { formatTimestamp, renderQuota, type QuotaDisplay } from '@/lib/format'
import type { LogEntry } from '@/types/api'

/** The events the server names in a log's `metadata.event` (recharge, management, system logs). */
export const LOG_EVENTS = [
  'redemptions_created',
  'redeemed',
  'invite_reward',
  'signup_grant',
  'user_created',
  'user_deleted',
  'user_enabled',
  'user_disabled',
  'user_promoted',
  'user_demoted',
  'quota_changed',
  'logs_deleted',
  'group_promoted',
  'task_refund',
] as const
type LogEvent = (typeof LOG_EVENTS)[number]

function metaOf(metadata: unknown): Record<string, unknown> {
  if (typeof metadata === 'string') {
    try {
      const v: unknown = JSON.parse(metadata)
      return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {}
    } catch {
      return {}
    }
  }
  return typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>) : {}
}

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '')
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)

/**
 * A log's text in the reader's language: the event the server named in `metadata.event`, worded
 * by the `logs:events.*` translations with its amounts formatted; the stored `content` for
 * consume logs, unknown events and rows written before events existed.
 */
export function logMessage(log: Pick<LogEntry, 'content' | 'metadata' | 'quota'>, t: TFunction, display: QuotaDisplay): string {
  const m = metaOf(log.metadata)
  const event = str(m.event)
  if (!(LOG_EVENTS as readonly string[]).includes(event)) return log.content
  const money = (q: number) => renderQuota(q, display)
  const remark = str(m.remark).trim()
  const withRemark = (text: string) => (remark ? t('logs:events.withRemark', { text, remark }) : text)
  switch (event as LogEvent) {
    case 'redemptions_created':
      return t('logs:events.redemptions_created', { count: num(m.count), name: str(m.name), amount: money(num(m.quota)) })
    case 'redeemed':
      return t('logs:events.redeemed', { name: str(m.name), amount: money(log.quota) })
    case 'invite_reward':
      return t('logs:events.invite_reward', { invitee: str(m.invitee), amount: money(log.quota) })
    case 'signup_grant':
      return t('logs:events.signup_grant', { amount: money(log.quota) })
    case 'user_created':
      return withRemark(t('logs:events.user_created', { operator: str(m.operator), amount: money(log.quota) }))
    case 'quota_changed':
      return withRemark(
        t(log.quota >= 0 ? 'logs:events.quota_added' : 'logs:events.quota_deducted', {
          operator: str(m.operator),
          amount: money(Math.abs(log.quota)),
        }),
      )
    case 'logs_deleted':
      return t('logs:events.logs_deleted', { count: num(m.count), before: formatTimestamp(num(m.before)) })
    case 'group_promoted':
      return t('logs:events.group_promoted', { from: str(m.from), to: str(m.to), total: money(num(m.total_topup)) })
    case 'task_refund':
      return t('logs:events.task_refund', {
        platform: str(m.platform),
        task: str(m.task_id),
        amount: money(log.quota),
        reason: str(m.reason),
      })
    default:
      return t(`logs:events.${event as 'user_deleted'}`, { operator: str(m.operator) })
  }
}
