import type { LogEntry } from '@/types/api'

/** What a consume log's `metadata` says about how its cost was computed (crates/api LogMeta). */
export interface CostMeta {
  groupRatio?: number
  inputRatio?: number
  outputRatio?: number
  priceType?: 'tokens' | 'times'
  usage: Partial<Record<UsageField, number>>
  usageEstimated: boolean
  /** The cost before the balance rule capped it (only when it did). */
  uncappedQuota?: number
  /** Answered from the response cache: what the answer costs at full price. */
  cacheFullQuota?: number
  /** Answered from the response cache: what the cache saved (full price minus the charge). */
  cacheSavedQuota?: number
  /** Error logs: what the client was answered. */
  status?: number
  code?: string
}

export const USAGE_FIELDS = [
  'cached_tokens',
  'cached_read_tokens',
  'cached_write_tokens',
  'reasoning_tokens',
  'input_audio_tokens',
  'output_audio_tokens',
  'input_text_tokens',
  'output_text_tokens',
  'input_image_tokens',
  'output_image_tokens',
] as const
export type UsageField = (typeof USAGE_FIELDS)[number]

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** The metadata as an object, whether the server sent it parsed or as JSON text. */
function metaObject(metadata: unknown): Record<string, unknown> {
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

export function parseCostMeta(metadata: unknown): CostMeta {
  const m = metaObject(metadata)
  const usageRaw = typeof m.usage === 'object' && m.usage !== null ? (m.usage as Record<string, unknown>) : {}
  const usage: CostMeta['usage'] = {}
  for (const f of USAGE_FIELDS) {
    const v = num(usageRaw[f])
    if (v) usage[f] = v
  }
  const priceType = m.price_type === 'times' || m.price_type === 'tokens' ? m.price_type : undefined
  return {
    groupRatio: num(m.group_ratio),
    inputRatio: num(m.input_ratio),
    outputRatio: num(m.output_ratio),
    priceType,
    usage,
    usageEstimated: m.usage_estimated === true,
    uncappedQuota: num(m.uncapped_quota),
    cacheFullQuota: num(m.cache_full_quota),
    cacheSavedQuota: num(m.cache_saved_quota),
    status: num(m.status),
    code: typeof m.code === 'string' && m.code ? m.code : undefined,
  }
}

export interface CostLine {
  id: 'input' | 'output' | 'perCall'
  /** Tokens (or calls) counted. */
  amount: number
  ratio: number
  /** Quota units this line comes to with the group ratio (before rounding up). */
  quota: number
}

/**
 * The cost of a consume log, line by line: prompt tokens × input ratio and completion tokens ×
 * output ratio (or one call × 1000 × the per-call ratio), each times the group ratio. Extra
 * ratios (cache, audio) and the round-up to whole units make the charged quota differ from the
 * lines' sum; the charged quota is the log's `quota`. Empty when the log has no price data.
 */
export function costLines(log: Pick<LogEntry, 'prompt_tokens' | 'completion_tokens'>, meta: CostMeta): CostLine[] {
  if (meta.inputRatio === undefined) return []
  const group = meta.groupRatio ?? 1
  if (meta.priceType === 'times') {
    return [{ id: 'perCall', amount: 1, ratio: meta.inputRatio, quota: 1000 * meta.inputRatio * group }]
  }
  const lines: CostLine[] = [
    { id: 'input', amount: log.prompt_tokens, ratio: meta.inputRatio, quota: log.prompt_tokens * meta.inputRatio * group },
  ]
  if (meta.outputRatio !== undefined) {
    lines.push({
      id: 'output',
      amount: log.completion_tokens,
      ratio: meta.outputRatio,
      quota: log.completion_tokens * meta.outputRatio * group,
    })
  }
  return lines
}
