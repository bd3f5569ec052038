import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LOCALES_DIR, readLocales } from '@/test/i18n'
import { convertDetectedLanguage, LANGUAGES, NAMESPACES } from './i18n'

function flatKeys(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [prefix]
  return Object.entries(value).flatMap(([k, v]) => flatKeys(v, prefix ? `${prefix}.${k}` : k))
}

describe('translations', () => {
  const resources = readLocales()

  it('exist for exactly the four languages and the declared namespaces', () => {
    expect(readdirSync(LOCALES_DIR).sort()).toEqual([...LANGUAGES].sort())
    for (const lng of LANGUAGES) {
      expect(readdirSync(join(LOCALES_DIR, lng)).sort()).toEqual(NAMESPACES.map((ns) => `${ns}.json`).sort())
    }
  })

  for (const ns of NAMESPACES) {
    it(`namespace "${ns}" has the same keys in every language`, () => {
      const reference = flatKeys(resources.zh_CN?.[ns]).sort()
      expect(reference.length).toBeGreaterThan(0)
      for (const lng of LANGUAGES) {
        expect({ lng, keys: flatKeys(resources[lng]?.[ns]).sort() }).toEqual({ lng, keys: reference })
      }
    })
  }

  it('has no empty strings', () => {
    for (const lng of LANGUAGES) {
      for (const ns of NAMESPACES) {
        const walk = (value: unknown, path: string): void => {
          if (typeof value === 'string') expect(value.trim(), `${lng}/${ns}:${path}`).not.toBe('')
          else if (value && typeof value === 'object')
            Object.entries(value).forEach(([k, v]) => walk(v, path ? `${path}.${k}` : k))
        }
        walk(resources[lng]?.[ns], '')
      }
    }
  })

  it('uses the same interpolation variables in every language', () => {
    const vars = (s: string) => [...s.matchAll(/{{\s*(\w+)\s*}}/g)].map((m) => m[1]).sort()
    for (const ns of NAMESPACES) {
      const ref = resources.zh_CN?.[ns]
      for (const key of flatKeys(ref)) {
        const get = (lng: string) =>
          key.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], resources[lng]?.[ns]) as string
        for (const lng of LANGUAGES) expect(vars(get(lng)), `${lng}/${ns}:${key}`).toEqual(vars(get('zh_CN')))
      }
    }
  })
})

describe('convertDetectedLanguage', () => {
  it('maps browser tags onto the supported codes', () => {
    expect(convertDetectedLanguage('zh-CN')).toBe('zh_CN')
    expect(convertDetectedLanguage('zh')).toBe('zh_CN')
    expect(convertDetectedLanguage('zh-Hans-CN')).toBe('zh_CN')
    expect(convertDetectedLanguage('zh-HK')).toBe('zh_HK')
    expect(convertDetectedLanguage('zh-TW')).toBe('zh_HK')
    expect(convertDetectedLanguage('zh-Hant')).toBe('zh_HK')
    expect(convertDetectedLanguage('en-US')).toBe('en')
    expect(convertDetectedLanguage('ja-JP')).toBe('ja')
    expect(convertDetectedLanguage('zh_HK')).toBe('zh_HK')
    expect(convertDetectedLanguage('fr-FR')).toBe('fr-FR')
  })
})
