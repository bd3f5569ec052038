import { DEFAULT_QUOTA_PER_UNIT, DEFAULT_SYSTEM_NAME, STORAGE_KEYS } from '@/config'
import { readJSON, writeJSON, writeString } from '@/lib/storage'
import type { QuotaDisplay } from '@/lib/format'
import type { SiteInfo, SiteModelOwner } from '@/types/api'
import { createStore, useStore } from './create-store'

export const DEFAULT_SITE_INFO: SiteInfo = {
  system_name: DEFAULT_SYSTEM_NAME,
  version: '',
  language: 'zh_CN',
  logo: '',
  footer_html: '',
  quota_per_unit: DEFAULT_QUOTA_PER_UNIT,
  display_in_currency: false,
  chat_link: '',
  chat_links: [],
  top_up_link: '',
  server_address: '',
  start_time: 0,
  email_verification: false,
  github_oauth: false,
  github_client_id: '',
  oidc_auth: false,
  wechat_login: false,
  wechat_qrcode: '',
  lark_login: false,
  lark_client_id: '',
  telegram_bot: '',
  turnstile_check: false,
  turnstile_site_key: '',
  UptimeEnabled: false,
  UptimeDomain: '',
  UptimePageName: '',
  UserInvoiceMonth: false,
}

export interface SiteState {
  info: SiteInfo
  /** True until the first /api/status answer (or failure) at start-up. */
  isLoading: boolean
  /** The model owners (spec 3, site info `ownedby`), loaded at start-up. */
  ownedby: SiteModelOwner[]
}

function merge(partial: Partial<SiteInfo> | null): SiteInfo {
  const info = { ...DEFAULT_SITE_INFO, ...(partial ?? {}) }
  if (!info.system_name) info.system_name = DEFAULT_SYSTEM_NAME
  if (!(info.quota_per_unit > 0)) info.quota_per_unit = DEFAULT_QUOTA_PER_UNIT
  return info
}

function initialState(): SiteState {
  return { info: merge(readJSON<Partial<SiteInfo>>(STORAGE_KEYS.siteInfo)), isLoading: true, ownedby: [] }
}

export const siteStore = createStore<SiteState>(initialState())

/** Store a fresh status from the server: app state plus localStorage `siteInfo`. */
export function setSiteInfo(status: Partial<SiteInfo>): void {
  const info = merge(status)
  writeJSON(STORAGE_KEYS.siteInfo, info)
  writeString(STORAGE_KEYS.quotaPerUnit, String(info.quota_per_unit))
  writeString(STORAGE_KEYS.displayInCurrency, String(info.display_in_currency))
  siteStore.set((prev) => ({ ...prev, info, isLoading: false }))
}

/** The status call failed: keep the stored copy and stop loading. */
export function keepStoredSiteInfo(): void {
  siteStore.set((prev) => ({ ...prev, isLoading: false }))
}

/** The model owners as loaded at start-up. */
export function setModelOwners(ownedby: SiteModelOwner[]): void {
  siteStore.set((prev) => ({ ...prev, ownedby }))
}

export function resetSiteStore(): void {
  siteStore.set(initialState())
}

export function useSite(): SiteState {
  return useStore(siteStore)
}

export function useSiteInfo(): SiteInfo {
  return useStore(siteStore).info
}

/** How the site shows quota amounts (renderQuota's second argument). */
export function useQuotaDisplay(): QuotaDisplay {
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  return { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
}
