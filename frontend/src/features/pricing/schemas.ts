import type { TFunction } from 'i18next'
import { z } from 'zod'
import { DEFAULT_EXTRA_RATIOS, EXTRA_RATIO_KEYS, type ExtraRatios, type Price, type PricePayload, type PriceType } from './types'

/** What the price form edits (numbers as text). */
export interface PriceFormValues {
  model: string
  type: PriceType
  channel_type: string
  input: string
  output: string
  extra: Record<keyof ExtraRatios, string>
  locked: boolean
  /** The model's output limit in tokens; empty or 0 = unknown. */
  max_output_tokens: string
}

export function priceFormDefaults(price?: Price): PriceFormValues {
  const extra = { ...DEFAULT_EXTRA_RATIOS, ...(price?.extra_ratios ?? {}) }
  return {
    model: price?.model ?? '',
    type: price?.type ?? 'tokens',
    channel_type: price ? String(price.channel_type) : '',
    input: price ? String(price.input) : '',
    output: price ? String(price.output) : '',
    extra: Object.fromEntries(EXTRA_RATIO_KEYS.map((k) => [k, String(extra[k])])) as Record<keyof ExtraRatios, string>,
    locked: price?.locked ?? false,
    max_output_tokens: price?.max_output_tokens ? String(price.max_output_tokens) : '',
  }
}

/** Spec section 5: a `*` wildcard only as the last character, with something before it. */
export function isValidModelName(name: string): boolean {
  const star = name.indexOf('*')
  return star === -1 || (star === name.length - 1 && star > 0)
}

const isRatio = (s: string) => s.trim() !== '' && Number.isFinite(Number(s)) && Number(s) >= 0

/**
 * Price form (spec section 5): model, owner, type, input and output ratios required; ratios
 * at least 0; type tokens or times; the wildcard rule. Times prices send output 0.
 */
export function createPriceSchema(t: TFunction) {
  const ratio = z.string().trim()
  return z
    .object({
      model: z.string().trim().min(1, t('pricing:validation.modelRequired')),
      type: z.enum(['tokens', 'times'], { message: t('pricing:validation.typeInvalid') }),
      channel_type: z.string().trim().min(1, t('pricing:validation.ownerRequired')),
      input: ratio,
      output: ratio,
      extra: z.object(Object.fromEntries(EXTRA_RATIO_KEYS.map((k) => [k, ratio])) as Record<keyof ExtraRatios, typeof ratio>),
      locked: z.boolean(),
      max_output_tokens: z.string().trim(),
    })
    .superRefine((v, ctx) => {
      if (v.model && !isValidModelName(v.model)) {
        ctx.addIssue({ code: 'custom', path: ['model'], message: t('pricing:validation.wildcard') })
      }
      if (!isRatio(v.input)) ctx.addIssue({ code: 'custom', path: ['input'], message: t('pricing:validation.ratio') })
      if (v.type === 'tokens' && !isRatio(v.output)) {
        ctx.addIssue({ code: 'custom', path: ['output'], message: t('pricing:validation.ratio') })
      }
      const limit = v.max_output_tokens
      if (limit !== '' && !(Number.isInteger(Number(limit)) && Number(limit) >= 0 && Number(limit) <= 10_000_000)) {
        ctx.addIssue({ code: 'custom', path: ['max_output_tokens'], message: t('pricing:validation.maxOutput') })
      }
      for (const k of EXTRA_RATIO_KEYS) {
        if (!isRatio(v.extra[k])) ctx.addIssue({ code: 'custom', path: ['extra', k], message: t('pricing:validation.ratio') })
      }
    })
    .transform(
      (v): PricePayload => ({
        model: v.model,
        type: v.type,
        channel_type: Number(v.channel_type),
        input: Number(v.input),
        output: v.type === 'times' ? 0 : Number(v.output),
        extra_ratios: Object.fromEntries(EXTRA_RATIO_KEYS.map((k) => [k, Number(v.extra[k])])) as unknown as ExtraRatios,
        locked: v.locked,
        max_output_tokens: v.type === 'times' || v.max_output_tokens === '' ? 0 : Number(v.max_output_tokens),
      }),
    )
}

/**
 * The batch box: a JSON array of prices (or `{data: [...]}`), each with model, type,
 * channel_type, input and output. Returns the rows or a translated reason.
 */
export function parseBatch(text: string, t: TFunction): { rows: unknown[] } | { error: string } {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    return { error: t('pricing:batch.invalidJson') }
  }
  const rows = Array.isArray(doc)
    ? doc
    : doc && typeof doc === 'object' && Array.isArray((doc as { data?: unknown }).data)
      ? (doc as { data: unknown[] }).data
      : null
  if (!rows) return { error: t('pricing:batch.notArray') }
  if (rows.length === 0) return { error: t('pricing:batch.empty') }
  for (const [i, row] of rows.entries()) {
    const r = row as Partial<PricePayload> | null
    if (!r || typeof r !== 'object' || typeof r.model !== 'string' || !r.model.trim()) {
      return { error: t('pricing:batch.rowInvalid', { row: i + 1 }) }
    }
    if (!isValidModelName(r.model.trim())) return { error: t('pricing:batch.rowInvalid', { row: i + 1 }) }
  }
  return { rows }
}
