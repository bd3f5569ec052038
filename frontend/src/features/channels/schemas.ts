import type { TFunction } from 'i18next'
import { z } from 'zod'
import { needsBaseUrl, servesChat, speaksOpenAi, SWITCH_KEYS, takesAnthropicBeta, usesRegion, type Channel, type SwitchKey } from './types'

/** The voices of `/v1/audio/speech` a channel may map to its upstream's voices (spec section 3). */
export const TTS_VOICES = ['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer'] as const
export type TtsVoice = (typeof TTS_VOICES)[number]
/** Body keys the other parameters may not set (the server refuses them too). */
const RESERVED_PARAMETERS = [
  'model',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
  'n',
]
const CUSTOM_PARAMETER_MAX_BYTES = 4096
const DISABLED_STREAM_MAX = 200
const VOICE_NAME_MAX = 100
/** Vertex AI's region when the channel's config names none (the server's default). */
export const VERTEX_DEFAULT_REGION = 'us-central1'
/** The provider switches' limits (the server's, crates/domain/src/channel_settings.rs). */
export const PLUGIN_MAX_BYTES = 4096
export const PLUGIN_ID_MAX = 64
export const KNOWLEDGE_ID_MAX = 128
export const KNOWLEDGE_TEMPLATE_MAX = 4000
/**
 * The placeholders a knowledge-base prompt template must contain. Kept out of the translations
 * (i18next would read them as its own placeholders) and passed in as values.
 */
export const KNOWLEDGE_PLACEHOLDERS = ['{{knowledge}}', '{{question}}'] as const
/**
 * `config.anthropic_beta`'s limits (the server's, crates/domain/src/channel_settings.rs): at most
 * this many flags a list, each of lower-case letters, digits and `-`, at most
 * `ANTHROPIC_BETA_FLAG_MAX` characters; `remove` also takes `prefix*` and `*`.
 */
export const ANTHROPIC_BETA_MAX = 32
export const ANTHROPIC_BETA_FLAG_MAX = 64
const ANTHROPIC_BETA_FLAG = /^[a-z0-9-]+$/
/** An example of OpenRouter plugins (the plugin box's placeholder). */
export const PLUGIN_EXAMPLE = '{\n  "file-parser": { "pdf": { "engine": "pdf-text" } }\n}'

/**
 * The switches a type supports (GET /api/channel/switches); `undefined` while that list is not
 * known (not loaded yet, or it failed), when the form leaves the channel's switches as they are.
 */
export type SwitchesOf = (type: number) => readonly SwitchKey[] | undefined

/** What the channel form edits (text inputs; the schema turns them into the payload). */
export interface ChannelFormValues {
  name: string
  type: string
  /** One key a line; when creating, each line becomes a channel. Editing: empty keeps the key. */
  key: string
  base_url: string
  models: string
  group: string
  model_mapping: string
  priority: string
  weight: string
  custom_headers: string
  test_model: string
  proxy: string
  tag: string
  /** Azure OpenAI only: stored in the channel's `config`. */
  api_version: string
  /** Vertex AI only: `config.region`. */
  region: string
  /** Comma list of models whose stream requests skip the channel. */
  disabled_stream: string
  /** `config.only_chat`: the channel serves chat only. */
  only_chat: boolean
  /** `config.voice_mapping`, one upstream voice per TTS voice (empty: not mapped). */
  voices: Record<TtsVoice, string>
  /** `config.custom_parameter` as JSON text. */
  custom_parameter: string
  /** Provider switches (`config.<key>`), used only for the types that support them. */
  web_search: boolean
  code_execution: boolean
  /** `config.plugin` as JSON text (empty: off). */
  plugin: string
  /** `config.knowledge_id` (empty: off). */
  knowledge_id: string
  /** `config.knowledge_template` (empty: the provider's default template). */
  knowledge_template: string
  /** `config.anthropic_beta.add` as a comma list: flags sent upstream beside the client's. */
  anthropic_beta_add: string
  /** `config.anthropic_beta.remove` as a comma list: client flags (`prefix*`, `*`) not sent on. */
  anthropic_beta_remove: string
}

/** Body of POST /api/channel (and of PUT /api/channel with an `id`; `key` left out keeps it). */
export interface ChannelPayload {
  name: string
  type: number
  key?: string
  base_url: string
  models: string
  group: string
  model_mapping: string
  priority: number
  weight: number
  custom_headers: string
  test_model: string
  proxy: string
  tag: string
  /** Per-type and relaying settings; sent when editing or when some is set. */
  config?: Record<string, unknown>
  /** Sent when editing or when not empty. */
  disabled_stream?: string[]
}

/** Azure's API version when the channel's config names none (the server's default). */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21'
const AZURE = 3

const noVoices = (): Record<TtsVoice, string> =>
  Object.fromEntries(TTS_VOICES.map((v) => [v, ''])) as Record<TtsVoice, string>

/** One list of `config.anthropic_beta` as comma-separated text (empty when absent). */
function anthropicBetaOf(config: Record<string, unknown> | null | undefined, list: 'add' | 'remove'): string {
  const setting = config?.anthropic_beta
  if (typeof setting !== 'object' || setting === null) return ''
  const flags = (setting as Record<string, unknown>)[list]
  return Array.isArray(flags) ? flags.filter((f): f is string => typeof f === 'string').join(',') : ''
}

function voicesOf(config: Record<string, unknown> | null | undefined): Record<TtsVoice, string> {
  const out = noVoices()
  const mapping = config?.voice_mapping
  if (typeof mapping === 'object' && mapping !== null) {
    for (const v of TTS_VOICES) {
      const target = (mapping as Record<string, unknown>)[v]
      if (typeof target === 'string') out[v] = target
    }
  }
  return out
}

const prettyJson = (value: unknown): string => {
  if (value === null || value === undefined) return ''
  let parsed = value
  if (typeof value === 'string') {
    if (!value.trim()) return ''
    try {
      parsed = JSON.parse(value)
    } catch {
      return value
    }
  }
  if (typeof parsed === 'object' && parsed !== null && Object.keys(parsed).length === 0) return ''
  return JSON.stringify(parsed, null, 2)
}

export function channelFormDefaults(channel?: Channel): ChannelFormValues {
  if (!channel) {
    return {
      name: '',
      type: '1',
      key: '',
      base_url: '',
      models: '',
      group: 'default',
      model_mapping: '',
      priority: '0',
      weight: '1',
      custom_headers: '',
      test_model: '',
      proxy: '',
      tag: '',
      api_version: '',
      region: '',
      disabled_stream: '',
      only_chat: false,
      voices: noVoices(),
      custom_parameter: '',
      web_search: false,
      code_execution: false,
      plugin: '',
      knowledge_id: '',
      knowledge_template: '',
      anthropic_beta_add: '',
      anthropic_beta_remove: '',
    }
  }
  const config = channel.config ?? {}
  return {
    name: channel.name,
    type: String(channel.type),
    key: '',
    base_url: channel.base_url,
    models: channel.models,
    group: channel.group,
    model_mapping: prettyJson(channel.model_mapping),
    priority: String(channel.priority),
    weight: String(channel.weight),
    custom_headers: prettyJson(channel.custom_headers),
    test_model: channel.test_model,
    proxy: channel.proxy,
    tag: channel.tag,
    api_version: typeof config.api_version === 'string' ? config.api_version : '',
    region: typeof config.region === 'string' ? config.region : '',
    disabled_stream: (channel.disabled_stream ?? []).join(','),
    only_chat: config.only_chat === true,
    voices: voicesOf(config),
    custom_parameter: prettyJson(config.custom_parameter),
    web_search: config.web_search === true,
    code_execution: config.code_execution === true,
    plugin: prettyJson(config.plugin),
    knowledge_id: typeof config.knowledge_id === 'string' ? config.knowledge_id : '',
    knowledge_template: typeof config.knowledge_template === 'string' ? config.knowledge_template : '',
    anthropic_beta_add: anthropicBetaOf(config, 'add'),
    anthropic_beta_remove: anthropicBetaOf(config, 'remove'),
  }
}

/** A comma list, trimmed, without empty entries or repeats. */
export function splitList(text: string): string[] {
  const seen = new Set<string>()
  for (const part of text.split(',')) {
    const item = part.trim()
    if (item) seen.add(item)
  }
  return [...seen]
}

/** An `anthropic-beta` flag the channel adds: lower-case letters, digits and `-`, at most 64 characters. */
export function isValidBetaFlag(flag: string): boolean {
  return flag.length <= ANTHROPIC_BETA_FLAG_MAX && ANTHROPIC_BETA_FLAG.test(flag)
}

/** A client flag the channel removes: a flag, a `prefix*` (every flag starting so), or `*` (all of them). */
export function isValidBetaRemoval(flag: string): boolean {
  return flag === '*' || isValidBetaFlag(flag.endsWith('*') ? flag.slice(0, -1) : flag)
}

/** Spec section 5: no spaces or commas; `*` only as the last character, after at least one other. */
export function isValidModelName(name: string): boolean {
  if (!name || /[\s,]/.test(name)) return false
  const body = name.endsWith('*') ? name.slice(0, -1) : name
  return body.length > 0 && !body.includes('*')
}

/** The parsed JSON object, or null when the text is not a JSON object. Empty text is {}. */
function parseObject(text: string): Record<string, unknown> | null {
  if (!text.trim()) return {}
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null
  } catch {
    return null
  }
}

const stripSlash = (url: string) => url.replace(/\/+$/, '')

/**
 * Channel form (spec section 5): name, type, key (when creating), models, group and, for types
 * without a default address, base URL required ("X cannot be empty"); model mapping and custom
 * headers valid JSON objects of strings; priority >= 0; weight >= 1; the `*` wildcard only at
 * the end of a model name; the test model without wildcard; URLs http(s), trailing slash stripped.
 */
export function createChannelSchema(
  t: TFunction,
  editing: boolean,
  previousConfig?: Record<string, unknown> | null,
  switchesOf: SwitchesOf = () => undefined,
) {
  const required = (field: string) => t('channels:validation.required', { field })
  return z
    .object({
      name: z.string().trim().min(1, required(t('channels:form.name'))),
      type: z.string().min(1, required(t('channels:form.type'))),
      key: z.string().trim(),
      base_url: z.string().trim(),
      models: z.string(),
      group: z.string(),
      model_mapping: z.string().trim(),
      priority: z.string().trim(),
      weight: z.string().trim(),
      custom_headers: z.string().trim(),
      test_model: z.string().trim(),
      proxy: z.string().trim(),
      tag: z.string().trim(),
      api_version: z.string().trim(),
      region: z.string().trim(),
      disabled_stream: z.string(),
      only_chat: z.boolean(),
      voices: z.object(Object.fromEntries(TTS_VOICES.map((v) => [v, z.string().trim()])) as Record<TtsVoice, z.ZodString>),
      custom_parameter: z.string().trim(),
      web_search: z.boolean(),
      code_execution: z.boolean(),
      plugin: z.string().trim(),
      knowledge_id: z.string().trim(),
      knowledge_template: z.string().trim(),
      anthropic_beta_add: z.string(),
      anthropic_beta_remove: z.string(),
    })
    .superRefine((v, ctx) => {
      const issue = (path: keyof ChannelFormValues, message: string) =>
        ctx.addIssue({ code: 'custom', path: [path], message })
      if (!editing && !v.key) issue('key', required(t('channels:form.key')))
      if (editing && v.key.includes('\n')) issue('key', t('channels:validation.oneKey'))

      const models = splitList(v.models)
      const badModel = models.find((m) => !isValidModelName(m))
      if (models.length === 0) issue('models', required(t('channels:form.models')))
      else if (badModel) issue('models', t('channels:validation.modelName', { model: badModel }))

      const groups = splitList(v.group)
      if (groups.length === 0) issue('group', required(t('channels:form.group')))
      else if (groups.some((g) => /\s/.test(g))) issue('group', t('channels:validation.groupSpaces'))

      if (!v.base_url && needsBaseUrl(Number(v.type))) issue('base_url', required(t('channels:form.baseUrl')))
      else if (v.base_url && !/^https?:\/\/[^\s/]+/i.test(v.base_url)) issue('base_url', t('channels:validation.url'))

      const mapping = parseObject(v.model_mapping)
      if (!mapping) issue('model_mapping', t('channels:validation.json'))
      else if (Object.values(mapping).some((x) => typeof x !== 'string'))
        issue('model_mapping', t('channels:validation.jsonStrings'))

      const headers = parseObject(v.custom_headers)
      if (!headers) issue('custom_headers', t('channels:validation.json'))
      else if (Object.values(headers).some((x) => typeof x !== 'string'))
        issue('custom_headers', t('channels:validation.jsonStrings'))

      if (!/^\d+$/.test(v.priority)) issue('priority', t('channels:validation.priority'))
      if (!/^\d+$/.test(v.weight) || Number(v.weight) < 1) issue('weight', t('channels:validation.weight'))

      if (v.test_model && (!isValidModelName(v.test_model) || v.test_model.endsWith('*')))
        issue('test_model', t('channels:validation.testModel'))
      if (v.proxy && !/^(https?|socks5h?):\/\/\S+$/i.test(v.proxy)) issue('proxy', t('channels:validation.proxy'))
      if (Number(v.type) === AZURE && v.api_version && !/^\d{4}-\d{2}-\d{2}(-[a-z0-9.-]+)?$/.test(v.api_version))
        issue('api_version', t('channels:validation.apiVersion'))

      const type = Number(v.type)
      const noStream = splitList(v.disabled_stream)
      const badNoStream = noStream.find((m) => !isValidModelName(m))
      if (badNoStream) issue('disabled_stream', t('channels:validation.modelName', { model: badNoStream }))
      else if (noStream.length > DISABLED_STREAM_MAX)
        issue('disabled_stream', t('channels:validation.disabledStreamMax', { max: DISABLED_STREAM_MAX }))
      if (usesRegion(type) && v.region && !/^[A-Za-z0-9-]{1,40}$/.test(v.region)) issue('region', t('channels:validation.region'))
      if (speaksOpenAi(type)) {
        for (const voice of TTS_VOICES) {
          const target = v.voices[voice]
          // eslint-disable-next-line no-control-regex
          if (target.length > VOICE_NAME_MAX || /[\u0000-\u001f\u007f]/.test(target))
            ctx.addIssue({ code: 'custom', path: ['voices', voice], message: t('channels:validation.voice', { max: VOICE_NAME_MAX }) })
        }
        const params = parseObject(v.custom_parameter)
        const reserved = params && Object.keys(params).find((k) => !k || RESERVED_PARAMETERS.includes(k))
        if (!params) issue('custom_parameter', t('channels:validation.json'))
        else if (reserved !== undefined && reserved !== null)
          issue('custom_parameter', t('channels:validation.customParameterReserved', { keys: RESERVED_PARAMETERS.join(', ') }))
        else if (new TextEncoder().encode(JSON.stringify(params)).length > CUSTOM_PARAMETER_MAX_BYTES)
          issue('custom_parameter', t('channels:validation.customParameterSize', { max: CUSTOM_PARAMETER_MAX_BYTES }))
      }
      if (takesAnthropicBeta(type)) {
        const lists = [
          ['anthropic_beta_add', isValidBetaFlag, 'channels:validation.anthropicBetaAdd'],
          ['anthropic_beta_remove', isValidBetaRemoval, 'channels:validation.anthropicBetaRemove'],
        ] as const
        for (const [key, valid, message] of lists) {
          const flags = splitList(v[key])
          const bad = flags.find((f) => !valid(f))
          if (bad !== undefined) issue(key, t(message, { flag: bad, max: ANTHROPIC_BETA_FLAG_MAX }))
          else if (flags.length > ANTHROPIC_BETA_MAX) issue(key, t('channels:validation.anthropicBetaMax', { max: ANTHROPIC_BETA_MAX }))
        }
      }
      // Provider switches: checked only where the type has them (the others are not sent).
      const switches = switchesOf(type) ?? []
      if (switches.includes('plugin')) {
        const message = checkPlugin(v.plugin, t)
        if (message) issue('plugin', message)
      }
      if (switches.includes('knowledge_id')) {
        if (v.knowledge_id.length > KNOWLEDGE_ID_MAX || !/^[A-Za-z0-9._-]*$/.test(v.knowledge_id))
          issue('knowledge_id', t('channels:validation.knowledgeId', { max: KNOWLEDGE_ID_MAX }))
      }
      if (switches.includes('knowledge_template') && v.knowledge_template) {
        const [knowledgeMark, questionMark] = KNOWLEDGE_PLACEHOLDERS
        if (!v.knowledge_id) issue('knowledge_template', t('channels:validation.knowledgeTemplateNeedsId'))
        else if ([...v.knowledge_template].length > KNOWLEDGE_TEMPLATE_MAX)
          issue('knowledge_template', t('channels:validation.knowledgeTemplateMax', { max: KNOWLEDGE_TEMPLATE_MAX }))
        else if (KNOWLEDGE_PLACEHOLDERS.some((p) => !v.knowledge_template.includes(p)))
          issue('knowledge_template', t('channels:validation.knowledgeTemplatePlaceholders', { knowledgeMark, questionMark }))
      }
    })
    .transform((v): ChannelPayload => {
      const payload: ChannelPayload = {
        name: v.name,
        type: Number(v.type),
        base_url: stripSlash(v.base_url),
        models: splitList(v.models).join(','),
        group: splitList(v.group).join(','),
        model_mapping: v.model_mapping,
        priority: Number(v.priority),
        weight: Number(v.weight),
        custom_headers: v.custom_headers,
        test_model: v.test_model,
        proxy: stripSlash(v.proxy),
        tag: v.tag,
      }
      // Several keys: one line each (blank lines dropped). Editing with no key keeps the current one.
      const key = v.key
        .split('\n')
        .map((k) => k.trim())
        .filter(Boolean)
        .join('\n')
      if (key) payload.key = key
      const config = channelConfig(payload.type, v, previousConfig, switchesOf(payload.type))
      if (editing || Object.keys(config).length > 0) payload.config = config
      const noStream = splitList(v.disabled_stream)
      if (editing || noStream.length > 0) payload.disabled_stream = noStream
      return payload
    })
}

/** Why the plugin text is refused (the server's rules), or null. Empty is off. */
function checkPlugin(text: string, t: TFunction): string | null {
  const plugins = parseObject(text)
  if (!plugins) return t('channels:validation.plugin')
  for (const [id, options] of Object.entries(plugins)) {
    if (id.length > PLUGIN_ID_MAX || !/^[A-Za-z0-9._:-]+$/.test(id)) return t('channels:validation.pluginId', { id, max: PLUGIN_ID_MAX })
    if (typeof options !== 'object' || options === null || Array.isArray(options) || 'id' in options)
      return t('channels:validation.pluginOptions', { id })
  }
  if (new TextEncoder().encode(JSON.stringify(plugins)).length > PLUGIN_MAX_BYTES)
    return t('channels:validation.pluginSize', { max: PLUGIN_MAX_BYTES })
  return null
}

/**
 * The channel's `config` as saved: the settings it had (unknown keys, and a region or API version
 * the form does not show for this type, are kept as they were), with the form's settings for this
 * type set or, when empty, removed. Voice mapping and other parameters exist only for the types
 * whose requests are OpenAI-shaped bodies; only-chat is kept only when on, and only for the types
 * that serve chat (not the task types). The `anthropic-beta` flags (`anthropic_beta`, its lists
 * trimmed, each flag once, an empty list left out) only for the types of Anthropic's protocol,
 * and only when a list names some.
 *
 * Provider switches: with the type's list known (`switches`), each switch is kept only when the
 * type supports it and it is on (off ones are left out), so a change of type drops the ones the
 * new type lacks (the server refuses a type change that leaves one on). While the list is not
 * known they stay as they were.
 */
export function channelConfig(
  type: number,
  v: Pick<
    ChannelFormValues,
    | 'api_version'
    | 'region'
    | 'only_chat'
    | 'voices'
    | 'custom_parameter'
    | 'web_search'
    | 'code_execution'
    | 'plugin'
    | 'knowledge_id'
    | 'knowledge_template'
    | 'anthropic_beta_add'
    | 'anthropic_beta_remove'
  >,
  previous?: Record<string, unknown> | null,
  switches?: readonly SwitchKey[],
): Record<string, unknown> {
  const config: Record<string, unknown> = { ...(previous ?? {}) }
  const put = (key: string, value: unknown) => {
    if (value === undefined) delete config[key]
    else config[key] = value
  }
  if (type === AZURE) put('api_version', v.api_version || undefined)
  if (usesRegion(type)) put('region', v.region || undefined)
  put('only_chat', servesChat(type) && v.only_chat ? true : undefined)
  const openAi = speaksOpenAi(type)
  const voices = Object.fromEntries(TTS_VOICES.filter((x) => v.voices[x]).map((x) => [x, v.voices[x]]))
  put('voice_mapping', openAi && Object.keys(voices).length > 0 ? voices : undefined)
  const params = parseObject(v.custom_parameter)
  put('custom_parameter', openAi && params && Object.keys(params).length > 0 ? params : undefined)
  const beta: Record<string, string[]> = {}
  const add = splitList(v.anthropic_beta_add)
  const remove = splitList(v.anthropic_beta_remove)
  if (add.length > 0) beta.add = add
  if (remove.length > 0) beta.remove = remove
  put('anthropic_beta', takesAnthropicBeta(type) && Object.keys(beta).length > 0 ? beta : undefined)
  if (switches) {
    const has = (key: SwitchKey) => switches.includes(key)
    for (const key of SWITCH_KEYS) if (!has(key)) delete config[key]
    if (has('web_search')) put('web_search', v.web_search ? true : undefined)
    if (has('code_execution')) put('code_execution', v.code_execution ? true : undefined)
    if (has('plugin')) {
      const plugins = parseObject(v.plugin)
      put('plugin', plugins && Object.keys(plugins).length > 0 ? plugins : undefined)
    }
    const knowledgeId = v.knowledge_id.trim()
    if (has('knowledge_id')) put('knowledge_id', knowledgeId || undefined)
    if (has('knowledge_template')) put('knowledge_template', (knowledgeId && v.knowledge_template.trim()) || undefined)
  }
  return config
}

/** How fetched model ids are shortened: a prefix (`openai/`) or a suffix (`:free`) removed. */
export type AffixMode = 'prefix' | 'suffix'

/**
 * The fetched upstream model ids as the channel offers them (one-hub's prefix/suffix handling):
 * an id that starts with the prefix (or ends with the suffix) is offered under the shorter name,
 * and the model mapping sends that name upstream as the full id; other ids are offered as they
 * are. Nothing is shortened to an empty or invalid name, nor to a name the upstream has too.
 */
export function shortenFetchedModels(
  ids: readonly string[],
  affix: string,
  mode: AffixMode,
): { models: string[]; mapping: Record<string, string> } {
  const models: string[] = []
  const mapping: Record<string, string> = {}
  for (const id of ids) {
    let name = id
    if (affix && mode === 'prefix' && id.startsWith(affix)) name = id.slice(affix.length)
    if (affix && mode === 'suffix' && id.endsWith(affix)) name = id.slice(0, id.length - affix.length)
    // A shorter name that is an upstream id of its own (or already taken) would hide that model.
    if (name !== id && (!isValidModelName(name) || name.endsWith('*') || name in mapping || ids.includes(name))) name = id
    if (name !== id) mapping[name] = id
    if (!models.includes(name)) models.push(name)
  }
  return { models, mapping }
}

/**
 * `text` (the form's model mapping, a JSON object or empty) with `entries` added (an entry for a
 * name already mapped keeps the existing one); `null` when `text` is not a JSON object.
 */
export function mergeMapping(text: string, entries: Record<string, string>): string | null {
  const current = parseObject(text)
  if (!current) return null
  const merged = { ...entries, ...current }
  return Object.keys(merged).length === 0 ? '' : JSON.stringify(merged, null, 2)
}
