import type { TFunction } from 'i18next'
import { z } from 'zod'
import { isChatLinkScheme } from '@/lib/chat-links'
import { parseQuotaText, quotaText, type QuotaUnit } from '@/lib/format'
import { LANGUAGES } from '@/lib/i18n'
import type { OptionDef } from './catalogue'
import type { OptionItem } from './types'

export type OptionFormValues = Record<string, string | boolean>


/** A chat-client row of the `ChatLinks` editor. */
export interface ChatLinkRow {
  name: string
  url: string
  show: boolean
  sort: number
}

/** The rows of a `ChatLinks` value, or null when it is not a JSON array of objects. */
export function parseChatLinkRows(text: string): ChatLinkRow[] | null {
  try {
    const parsed: unknown = JSON.parse(text || '[]')
    if (!Array.isArray(parsed)) return null
    const rows: ChatLinkRow[] = []
    for (const e of parsed) {
      if (typeof e !== 'object' || e === null || Array.isArray(e)) return null
      const { name, url, show, sort } = e as Record<string, unknown>
      rows.push({
        name: typeof name === 'string' ? name : '',
        url: typeof url === 'string' ? url : '',
        show: show !== false,
        sort: typeof sort === 'number' && Number.isFinite(sort) ? sort : 0,
      })
    }
    return rows
  } catch {
    return null
  }
}

/** The form's starting values: booleans as switches, quotas in the site's unit, secrets blank. */
export function initialValues(defs: OptionDef[], items: Map<string, OptionItem>, unit: QuotaUnit): OptionFormValues {
  return Object.fromEntries(
    defs.map((d) => {
      const raw = items.get(d.key)?.value ?? ''
      switch (d.kind.type) {
        case 'bool':
          return [d.key, raw === 'true']
        case 'secret':
          return [d.key, '']
        case 'quota':
          return [d.key, quotaText(Number(raw) || 0, unit)]
        case 'chatLinks': {
          // Compared as the editor writes it, so an untouched list is not a change.
          const rows = parseChatLinkRows(raw)
          return [d.key, rows ? JSON.stringify(rows) : raw]
        }
        default:
          return [d.key, raw]
      }
    }),
  )
}

function checkText(def: OptionDef, raw: string, t: TFunction, unit: QuotaUnit): string | null {
  const v = raw.trim()
  const k = def.kind
  switch (k.type) {
    case 'quota':
      if (Number.isNaN(parseQuotaText(v, unit))) return unit.dollars ? t('settings:validation.amount') : t('settings:validation.integer')
      return null
    case 'language':
      return (LANGUAGES as readonly string[]).includes(v) ? null : t('settings:validation.language')
    case 'chatLinks': {
      const rows = parseChatLinkRows(v)
      if (!rows) return t('settings:validation.jsonArray')
      if (!rows.every((r) => r.name.trim() && r.url.trim())) return t('settings:validation.chatLinks')
      // As the server (invalid_chat_link): web links and the built-in desktop clients' schemes.
      return rows.every((r) => isChatLinkScheme(r.url)) ? null : t('settings:validation.chatLinkScheme')
    }
    case 'int': {
      if (!/^-?\d+$/.test(v)) return t('settings:validation.integer')
      const n = Number(v)
      if (n < k.min || n > k.max) return t('settings:validation.range', { min: k.min, max: k.max })
      return null
    }
    case 'float': {
      const n = Number(v)
      if (v === '' || !Number.isFinite(n)) return t('settings:validation.number')
      if (n < k.min || n > k.max) return t('settings:validation.range', { min: k.min, max: k.max })
      return null
    }
    case 'ratio': {
      const n = Number(v)
      if (v === '' || !Number.isFinite(n)) return t('settings:validation.number')
      return n > 0 && n <= 1 ? null : t('settings:validation.ratio')
    }
    case 'url':
      return v === '' || /^https?:\/\/[^\s/]+/.test(v) ? null : t('settings:validation.url')
    case 'json': {
      if (v === '') return null
      try {
        const parsed: unknown = JSON.parse(v)
        const ok = k.top === 'array' ? Array.isArray(parsed) : !!parsed && typeof parsed === 'object' && !Array.isArray(parsed)
        return ok ? null : t(k.top === 'array' ? 'settings:validation.jsonArray' : 'settings:validation.jsonObject')
      } catch {
        return t('settings:validation.json')
      }
    }
    default:
      return null
  }
}

/** A section's form: each input checked by its kind (spec section 5: JSON fields must be valid JSON). */
export function createOptionsSchema(defs: OptionDef[], t: TFunction, unit: QuotaUnit) {
  return z.record(z.string(), z.union([z.string(), z.boolean()])).superRefine((values, ctx) => {
    for (const def of defs) {
      const v = values[def.key]
      if (typeof v !== 'string') continue
      const message = checkText(def, v, t, unit)
      if (message) ctx.addIssue({ code: 'custom', path: [def.key], message })
    }
  })
}

/**
 * What to send: the changed inputs (a URL without its trailing slash, a quota back in units),
 * secrets only when typed.
 */
export function changedOptions(
  defs: OptionDef[],
  initial: OptionFormValues,
  values: OptionFormValues,
  unit: QuotaUnit,
): { key: string; value: string | boolean }[] {
  const out: { key: string; value: string | boolean }[] = []
  for (const def of defs) {
    const v = values[def.key]
    if (v === undefined) continue
    if (def.kind.type === 'secret') {
      if (typeof v === 'string' && v.trim() !== '') out.push({ key: def.key, value: v.trim() })
      continue
    }
    if (typeof v === 'boolean') {
      if (v !== initial[def.key]) out.push({ key: def.key, value: v })
      continue
    }
    let text = def.kind.type === 'text' && def.kind.multiline ? v : v.trim()
    if (def.kind.type === 'url') text = text.replace(/\/+$/, '')
    if (text === initial[def.key]) continue
    out.push({ key: def.key, value: def.kind.type === 'quota' ? String(parseQuotaText(text, unit)) : text })
  }
  return out
}
