export type PriceType = 'tokens' | 'times'

/**
 * Multipliers of detailed token counts (`tokens += n * (ratio - 1)`); defaults 1, 1.25, 0.1 and
 * 1 for the rest. GET /api/prices lists all ten.
 */
export interface ExtraRatios {
  cached_tokens: number
  cached_write_tokens: number
  cached_read_tokens: number
  input_audio_tokens: number
  output_audio_tokens: number
  reasoning_tokens: number
  /** Text tokens of the prompt. */
  input_text_tokens: number
  /** Text tokens of the answer. */
  output_text_tokens: number
  /** Image tokens of the prompt. */
  input_image_tokens: number
  /** Image tokens of the answer (image generation). */
  output_image_tokens: number
}

export const EXTRA_RATIO_KEYS = [
  'cached_tokens',
  'cached_write_tokens',
  'cached_read_tokens',
  'input_audio_tokens',
  'output_audio_tokens',
  'reasoning_tokens',
  'input_text_tokens',
  'output_text_tokens',
  'input_image_tokens',
  'output_image_tokens',
] as const satisfies readonly (keyof ExtraRatios)[]

export const DEFAULT_EXTRA_RATIOS: ExtraRatios = {
  cached_tokens: 1,
  cached_write_tokens: 1.25,
  cached_read_tokens: 0.1,
  input_audio_tokens: 1,
  output_audio_tokens: 1,
  reasoning_tokens: 1,
  input_text_tokens: 1,
  output_text_tokens: 1,
  input_image_tokens: 1,
  output_image_tokens: 1,
}

/** A row of GET /api/prices. Ratios: 1 = $0.002 per 1K tokens (or per call for `times`). */
export interface Price {
  model: string
  type: PriceType
  /** The owner: a channel type id, or a model-owner id from 1000 on. */
  channel_type: number
  input: number
  output: number
  extra_ratios: Partial<ExtraRatios>
  locked: boolean
  /** The model's output limit in tokens (0 or absent: unknown); bounds reservations. */
  max_output_tokens?: number
  updated_at: number
}

/** Body of POST /api/prices (and `price` of PUT /api/prices). */
export interface PricePayload {
  model: string
  type: PriceType
  channel_type: number
  input: number
  output: number
  extra_ratios: ExtraRatios
  locked: boolean
  max_output_tokens: number
}

/** A row of GET /api/available_model: `price` is null while nobody priced the model. */
export interface AvailableModel {
  model: string
  price: {
    model: string
    type: PriceType
    channel_type: number
    input: number
    output: number
    extra?: Partial<ExtraRatios>
    locked: boolean
  } | null
  group_ratio: number
}

export interface ModelOwner {
  id: number
  name: string
  icon: string
}

/** GET /api/prices/warnings. */
export interface PriceWarnings {
  unpriced_models: string[]
  unknown_owner: string[]
}

export type SyncMode = 'add' | 'update' | 'overwrite'

/** POST /api/prices/sync: what changed (or, with dry_run, what would change). */
export interface SyncResult {
  inserted: number
  updated: number
  deleted: number
  unchanged: number
  locked: number
  skipped: number
  errors: string[]
  dry_run: boolean
  insert_models?: string[]
  update_models?: string[]
  delete_models?: string[]
}
