/** The console's own version, shown in the footer and compared with the server's. */
export const APP_VERSION = 'v0.17'

/** Shown until the server's site status has loaded, if nothing is stored either. */
export const DEFAULT_SYSTEM_NAME = 'Switchboard'

export const DEFAULT_QUOTA_PER_UNIT = 500_000

/** Keys this console keeps in localStorage (spec section 3). */
export const STORAGE_KEYS = {
  user: 'user',
  theme: 'theme',
  siteInfo: 'siteInfo',
  quotaPerUnit: 'quota_per_unit',
  displayInCurrency: 'display_in_currency',
  language: 'i18nextLng',
  notice: 'notice',
  /** The invitation (affiliate) code from a `/register?aff=` link, sent with a sign-up. */
  aff: 'aff',
} as const

/** Width at or below which the layout counts as mobile. */
export const MOBILE_MAX_WIDTH = 600
