import type { TFunction } from 'i18next'
import { z } from 'zod'
import { needsBaseUrl, type Channel } from './types'

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
  /** Extra settings; sent only for the types that have some (Azure's `api_version`). */
  config?: Record<string, unknown>
}

/** Azure's API version when the channel's config names none (the server's default). */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21'
const AZURE = 3

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
    }
  }
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
    api_version: typeof channel.config?.api_version === 'string' ? channel.config.api_version : '',
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
export function createChannelSchema(t: TFunction, editing: boolean) {
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
      if (payload.type === AZURE && v.api_version) payload.config = { api_version: v.api_version }
      return payload
    })
}
