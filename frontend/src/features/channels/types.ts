/** Channel status: 1 enabled, 2 disabled by hand, 3 disabled automatically (failed tests). */
export const CHANNEL_STATUS = {
  enabled: 1,
  disabled: 2,
  autoDisabled: 3,
} as const

/** A channel as listed by GET /api/channel (keys are never listed). */
export interface Channel {
  id: number
  type: number
  name: string
  base_url: string
  /** Comma-separated group symbols. */
  group: string
  /** Comma-separated model names (`prefix*` allowed). */
  models: string
  /** JSON text of {requested: upstream}; "{}" or "" for none. */
  model_mapping: string
  priority: number
  weight: number
  tag: string
  proxy: string
  test_model: string
  status: number
  /** Milliseconds of the last successful test. */
  response_time: number
  /** Unix seconds of the last test; 0 never tested. */
  test_time: number
  used_quota: number
  /** Upstream balance in micro-USD. */
  balance: number
  balance_updated_at: number
  custom_headers: Record<string, string> | null
  config: Record<string, unknown> | null
  /** Models (`prefix*` allowed) whose stream requests skip this channel. */
  disabled_stream?: string[]
  created_at: number
  updated_at: number
  /** Root only, on GET /api/channel/{id}. */
  key?: string
}

export interface ChannelType {
  id: number
  name: string
  /** Empty: the type has no default address, a base URL is required. */
  defaultBaseUrl: string
}

/**
 * The channel types the server knows (one-hub's ids; docs/api.md "Channels"). The server has no
 * endpoint listing them, so they are kept here in the same order.
 */
export const CHANNEL_TYPES: readonly ChannelType[] = [
  { id: 1, name: 'OpenAI', defaultBaseUrl: 'https://api.openai.com' },
  { id: 3, name: 'Azure OpenAI', defaultBaseUrl: '' },
  { id: 8, name: 'Custom', defaultBaseUrl: '' },
  { id: 14, name: 'Anthropic', defaultBaseUrl: 'https://api.anthropic.com' },
  { id: 15, name: 'Baidu Qianfan', defaultBaseUrl: 'https://qianfan.baidubce.com' },
  { id: 16, name: 'Zhipu', defaultBaseUrl: 'https://open.bigmodel.cn' },
  { id: 17, name: 'Ali DashScope', defaultBaseUrl: 'https://dashscope.aliyuncs.com/compatible-mode' },
  { id: 20, name: 'OpenRouter', defaultBaseUrl: 'https://openrouter.ai/api' },
  { id: 25, name: 'Google Gemini', defaultBaseUrl: 'https://generativelanguage.googleapis.com' },
  { id: 28, name: 'DeepSeek', defaultBaseUrl: 'https://api.deepseek.com' },
  { id: 29, name: 'Moonshot', defaultBaseUrl: 'https://api.moonshot.cn' },
  { id: 30, name: 'Mistral', defaultBaseUrl: 'https://api.mistral.ai' },
  { id: 31, name: 'Groq', defaultBaseUrl: 'https://api.groq.com/openai' },
  { id: 32, name: 'AWS Bedrock', defaultBaseUrl: '' },
  { id: 34, name: 'Midjourney Proxy', defaultBaseUrl: '' },
  { id: 36, name: 'Cohere', defaultBaseUrl: 'https://api.cohere.ai' },
  { id: 39, name: 'Ollama', defaultBaseUrl: 'http://localhost:11434' },
  { id: 41, name: 'Suno API', defaultBaseUrl: '' },
  { id: 42, name: 'Vertex AI', defaultBaseUrl: '' },
  { id: 45, name: 'SiliconFlow', defaultBaseUrl: 'https://api.siliconflow.cn' },
  { id: 47, name: 'Jina', defaultBaseUrl: 'https://api.jina.ai' },
  { id: 49, name: 'xAI', defaultBaseUrl: 'https://api.x.ai' },
  { id: 53, name: 'Kling', defaultBaseUrl: 'https://api.klingai.com' },
]

/** The async-task types (docs/tasks.md): Midjourney Proxy, Suno API and Kling video. */
export const TASK_CHANNEL_TYPES: readonly number[] = [34, 41, 53]

/** Kling video (docs/tasks.md): its key is `ACCESS_KEY|SECRET_KEY` (or a ready bearer token). */
export const KLING = 53

/** Model names a Kling channel serves: per call `kling-video_{model}_{mode}_{seconds}`, per second `kling-video_{model}_{mode}`. */
export const KLING_MODELS = [
  'kling-video_kling-v1_std_5',
  'kling-video_kling-v1_std_10',
  'kling-video_kling-v1_pro_5',
  'kling-video_kling-v1_pro_10',
] as const

/** Types whose key is not a single API key, with the hint saying how to write it (`channels:form.keyFormat.*`). */
export type KeyFormat = 'kling'
export function keyFormat(typeId: number): KeyFormat | undefined {
  return typeId === KLING ? 'kling' : undefined
}

/** Bedrock and Vertex AI derive their endpoint from the key; other types without a default need a base URL. */
export function needsBaseUrl(typeId: number): boolean {
  const type = CHANNEL_TYPES.find((x) => x.id === typeId)
  return type !== undefined && type.defaultBaseUrl === '' && typeId !== 32 && typeId !== 42
}

/**
 * Types whose requests are OpenAI-shaped JSON bodies the server sends on (the OpenAI-compatible
 * adapter and Azure): the only ones that take a voice mapping and other parameters. Anthropic,
 * Gemini, Bedrock, Cohere, Vertex AI and Jina have bodies of their own, and so have the task
 * types (Midjourney Proxy 34, Suno API 41, Kling 53).
 */
export function speaksOpenAi(typeId: number): boolean {
  return ![14, 25, 32, 34, 36, 41, 42, 47, 53].includes(typeId)
}

/** Whether a channel of this type serves chat at all: the task types do not, so chat-only means nothing there (the server refuses it). */
export function servesChat(typeId: number): boolean {
  return !TASK_CHANNEL_TYPES.includes(typeId)
}

/**
 * The types of Anthropic's protocol (Anthropic, AWS Bedrock, Vertex AI): the only ones whose
 * `config.anthropic_beta` may name flags (the server refuses it on the others).
 */
export const ANTHROPIC_BETA_TYPES: readonly number[] = [14, 32, 42]

/** Whether a channel of this type sends `anthropic-beta` flags upstream (`config.anthropic_beta`). */
export function takesAnthropicBeta(typeId: number): boolean {
  return ANTHROPIC_BETA_TYPES.includes(typeId)
}

/** Vertex AI builds its host from the channel's region. */
export function usesRegion(typeId: number): boolean {
  return typeId === 42
}

export function channelTypeName(typeId: number): string {
  return CHANNEL_TYPES.find((x) => x.id === typeId)?.name ?? `#${typeId}`
}

/**
 * The provider switches: keys of a channel's `config` that turn on the provider's own features
 * for chat requests, in the order the form shows them (the server's order).
 */
export const SWITCH_KEYS = ['web_search', 'code_execution', 'plugin', 'knowledge_id', 'knowledge_template'] as const
export type SwitchKey = (typeof SWITCH_KEYS)[number]

export function isSwitchKey(key: string): key is SwitchKey {
  return (SWITCH_KEYS as readonly string[]).includes(key)
}

/** A row of GET /api/channel/switches: a channel type with at least one switch. */
export interface ChannelTypeSwitches {
  type: number
  name: string
  switches: string[]
}

export interface ChannelTag {
  tag: string
  count: number
}

export interface TestResult {
  time_ms: number
  model: string
  enabled: boolean
}

export interface TestAllSummary {
  tested: number
  failed: number
  disabled: number
  enabled: number
  /** Each channel whose test failed, with the reason. */
  failures?: { id: number; name: string; message: string }[]
}

/** What a test run since the page was opened found for one channel (the list keeps only the last success). */
export type TestOutcome = { ok: true; ms: number } | { ok: false; message: string }

/** A (channel, model) of this node's smarter-routing state (GET /api/channel/health). */
export interface ChannelHealthPair {
  channel_id: number
  model: string
  state: 'closed' | 'open' | 'half_open'
  /** Unix seconds the breaker last opened; null while closed. */
  opened_at: number | null
  error_ratio: number
  requests: number
  failures: number
  /** Peak-EWMA latency to the response headers; null before the first measured call. */
  latency_ms: number | null
  in_flight: number
}

export interface ChannelHealth {
  circuit_breaker_enabled: boolean
  latency_aware_routing: boolean
  pairs: ChannelHealthPair[]
}
