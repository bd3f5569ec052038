import type { TFunction } from 'i18next'
import { z } from 'zod'
import type { OptionDef } from './catalogue'

export type OptionFormValues = Record<string, string | boolean>

function checkText(def: OptionDef, raw: string, t: TFunction): string | null {
  const v = raw.trim()
  const k = def.kind
  switch (k.type) {
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
export function createOptionsSchema(defs: OptionDef[], t: TFunction) {
  return z.record(z.string(), z.union([z.string(), z.boolean()])).superRefine((values, ctx) => {
    for (const def of defs) {
      const v = values[def.key]
      if (typeof v !== 'string') continue
      const message = checkText(def, v, t)
      if (message) ctx.addIssue({ code: 'custom', path: [def.key], message })
    }
  })
}

/** What to send: the changed inputs (a URL without its trailing slash), secrets only when typed. */
export function changedOptions(
  defs: OptionDef[],
  initial: OptionFormValues,
  values: OptionFormValues,
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
    if (text !== initial[def.key]) out.push({ key: def.key, value: text })
  }
  return out
}
