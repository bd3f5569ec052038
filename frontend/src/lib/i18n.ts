import i18n, { type InitOptions } from 'i18next'
import LanguageDetector from 'i18next-browser-languagedetector'
import HttpBackend from 'i18next-http-backend'
import { initReactI18next } from 'react-i18next'
import { STORAGE_KEYS } from '@/config'
import { readString } from './storage'

export const LANGUAGES = ['zh_CN', 'zh_HK', 'en', 'ja'] as const
export type Language = (typeof LANGUAGES)[number]
export const DEFAULT_LANGUAGE: Language = 'zh_CN'

export const NAMESPACES = ['common', 'auth', 'panel', 'errors', 'tokens', 'logs', 'channels', 'users', 'groups', 'redemptions', 'payment', 'topup', 'owners', 'dashboard', 'profile', 'pricing', 'invoices', 'analytics', 'system', 'settings', 'public', 'playground', 'tasks', 'docs', 'telegram'] as const
export type Namespace = (typeof NAMESPACES)[number]

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value)
}

/**
 * Map what a detector finds (browser tags such as `zh-TW`, `en-US`, `ja-JP`, or our own
 * codes) onto the four supported codes. Unknown tags pass through and then fall back.
 */
export function convertDetectedLanguage(lng: string): string {
  if (isLanguage(lng)) return lng
  const tag = lng.replace(/_/g, '-').toLowerCase()
  if (tag.startsWith('zh')) {
    return /^zh-(hk|tw|mo|hant)/.test(tag) ? 'zh_HK' : 'zh_CN'
  }
  if (tag === 'en' || tag.startsWith('en-')) return 'en'
  if (tag === 'ja' || tag.startsWith('ja-')) return 'ja'
  return lng
}

/** BCP 47 tag for <html lang>. */
export function htmlLang(lng: string): string {
  return lng.replace(/_/g, '-')
}

/** Options shared by the app and the tests. */
export const baseI18nOptions = {
  fallbackLng: DEFAULT_LANGUAGE,
  supportedLngs: [...LANGUAGES],
  // Our codes contain "_"; never try to load a bare "zh" or "en" resource.
  load: 'currentOnly',
  ns: [...NAMESPACES],
  // Every namespace is "default": useTranslation() waits for all of them, keys are always
  // written with their namespace (`auth:login.title`).
  defaultNS: [...NAMESPACES],
  fallbackNS: false,
  interpolation: { escapeValue: false }, // React escapes
  returnNull: false,
  // Translation loading (spec section 9): at most 10 parallel reads, 5 retries, 350 ms doubling.
  maxParallelReads: 10,
  maxRetries: 5,
  retryTimeout: 350,
} satisfies InitOptions

let storedChoiceAtStart = false

/**
 * Spec: the language comes from the stored choice, else from the site status, else Chinese.
 * True when the user had made no choice before this page load (no ?lng= and nothing cached).
 */
export function mayUseServerLanguage(): boolean {
  return !storedChoiceAtStart
}

export function initI18n() {
  storedChoiceAtStart =
    readString(STORAGE_KEYS.language) !== null ||
    new URLSearchParams(window.location.search).has('lng')

  i18n.on('languageChanged', (lng) => {
    document.documentElement.lang = htmlLang(lng)
  })

  return i18n
    .use(HttpBackend)
    .use(LanguageDetector)
    .use(initReactI18next)
    .init({
      ...baseI18nOptions,
      backend: { loadPath: '/locales/{{lng}}/{{ns}}.json' },
      detection: {
        order: ['querystring', 'cookie', 'localStorage', 'sessionStorage', 'navigator', 'htmlTag'],
        lookupLocalStorage: STORAGE_KEYS.language,
        caches: ['localStorage'],
        convertDetectedLanguage,
      },
    })
}

/** Apply the server's default language if the visitor has not chosen one. */
export function applyServerLanguage(lng: string | undefined): void {
  if (!mayUseServerLanguage() || !lng) return
  const code = convertDetectedLanguage(lng)
  if (isLanguage(code) && code !== i18n.resolvedLanguage) void i18n.changeLanguage(code)
}

export default i18n
