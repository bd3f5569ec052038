import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import i18n, { type Resource } from 'i18next'
import { initReactI18next } from 'react-i18next'
import { baseI18nOptions, LANGUAGES } from '@/lib/i18n'

export const LOCALES_DIR = join(process.cwd(), 'public', 'locales')

/** Every locale file, read from public/locales (what the app loads over HTTP). */
export function readLocales(): Resource {
  const resources: Resource = {}
  for (const lng of readdirSync(LOCALES_DIR)) {
    resources[lng] = {}
    for (const file of readdirSync(join(LOCALES_DIR, lng))) {
      if (!file.endsWith('.json')) continue
      resources[lng][file.replace(/\.json$/, '')] = JSON.parse(readFileSync(join(LOCALES_DIR, lng, file), 'utf8'))
    }
  }
  return resources
}

export async function initTestI18n(lng: (typeof LANGUAGES)[number] = 'zh_CN') {
  if (!i18n.isInitialized) {
    await i18n.use(initReactI18next).init({
      ...baseI18nOptions,
      lng,
      resources: readLocales(),
      initAsync: false,
    })
  } else if (i18n.language !== lng) {
    await i18n.changeLanguage(lng)
  }
  return i18n
}
