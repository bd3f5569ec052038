/**
 * The settings the console edits, mirroring the server's catalogue (crates/domain/src/options.rs):
 * each key's kind decides its input and its check; secrets are write-only. Keys the server
 * lists that are not here are shown as plain text under "other". The server lists to an
 * administrator only what they manage (root-only settings are left out), so a section shows
 * the keys the caller may change.
 */
export type OptionKind =
  | { type: 'bool' }
  /** Quota units, typed as money when the site shows money (with the other unit as a hint). */
  | { type: 'quota' }
  /** One of the console's languages. */
  | { type: 'language' }
  /** The chat-client list (JSON array of {name, url, show, sort}), edited as rows. */
  | { type: 'chatLinks' }
  | { type: 'int'; min: number; max: number }
  | { type: 'float'; min: number; max: number }
  /** A share: greater than 0, at most 1. */
  | { type: 'ratio' }
  | { type: 'text'; multiline?: boolean }
  | { type: 'url' }
  | { type: 'json'; top: 'object' | 'array' }
  | { type: 'secret' }

export type SettingsTab = 'operation' | 'system' | 'other'

const BOOL = { type: 'bool' } as const
const QUOTA = { type: 'quota' } as const
const LANGUAGE = { type: 'language' } as const
const CHAT_LINKS = { type: 'chatLinks' } as const
const TEXT = { type: 'text' } as const
const LONG = { type: 'text', multiline: true } as const
const URL = { type: 'url' } as const
const SECRET = { type: 'secret' } as const
const RATIO = { type: 'ratio' } as const
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => ({ type: 'int', min, max }) as const
const float = (min: number, max: number) => ({ type: 'float', min, max }) as const
const json = (top: 'object' | 'array') => ({ type: 'json', top }) as const

export const SECTIONS = [
  {
    id: 'general',
    tab: 'operation',
    options: [
      ['TopUpLink', URL],
      ['ChatLink', URL],
      ['ChatLinks', CHAT_LINKS],
      ['DisplayInCurrencyEnabled', BOOL],
      ['QuotaPerUnit', int(1, 1_000_000_000)],
      ['UserInvoiceMonth', BOOL],
      ['ApproximateTokenEnabled', BOOL],
    ],
  },
  {
    id: 'quota',
    tab: 'operation',
    options: [
      ['QuotaForNewUser', QUOTA],
      ['QuotaForInviter', QUOTA],
      ['QuotaForInvitee', QUOTA],
      ['PreConsumedQuota', QUOTA],
      ['OverdraftTolerance', QUOTA],
      ['DefaultMaxOutputTokens', int(1, 10_000_000)],
      ['QuotaRemindThreshold', QUOTA],
    ],
  },
  {
    id: 'pricing',
    tab: 'operation',
    options: [
      ['DefaultPriceEnabled', BOOL],
      ['ExtraTokenPriceJson', json('object')],
      ['PriceSyncUrl', URL],
      ['AllowPrivateOutbound', BOOL],
    ],
  },
  {
    id: 'channels',
    tab: 'operation',
    options: [
      ['RetryTimes', int(0, 10)],
      ['RetryCooldownSeconds', int(0, 86_400)],
      ['RetryTimeOut', int(0, 3_600)],
      ['AutomaticDisableChannelEnabled', BOOL],
      ['AutomaticEnableChannelEnabled', BOOL],
      ['ChannelDisableThreshold', float(0, 3_600)],
      ['DisableChannelKeywords', LONG],
      ['ChannelTestFrequency', int(0, 100_000)],
    ],
  },
  {
    // Smarter routing (per node): the circuit breaker per channel and model, and latency-aware
    // choice within a priority (same ranges as the server's catalogue).
    id: 'routing',
    tab: 'operation',
    options: [
      ['CircuitBreakerEnabled', BOOL],
      ['CircuitBreakerErrorRatio', RATIO],
      ['CircuitBreakerMinRequests', int(1, 1_000_000)],
      ['CircuitBreakerWindowSeconds', int(1, 86_400)],
      ['CircuitBreakerOpenSeconds', int(1, 86_400)],
      ['LatencyAwareRouting', BOOL],
    ],
  },
  {
    id: 'relay',
    tab: 'operation',
    options: [
      ['ClaudeAPIEnabled', BOOL],
      ['GeminiAPIEnabled', BOOL],
    ],
  },
  {
    // The response cache: identical non-streamed chat requests of keys with the cache toggle
    // on are answered from an earlier answer (same ranges as the server's catalogue).
    id: 'cache',
    tab: 'operation',
    options: [
      ['ChatCacheEnabled', BOOL],
      ['ChatCacheExpireMinute', int(1, 100_000)],
      ['ChatCacheRatio', float(0, 1)],
      ['ChatCacheMaxEntries', int(100, 10_000_000)],
      ['ChatCacheMaxEntryKB', int(1, 16_384)],
    ],
  },
  {
    id: 'logs',
    tab: 'operation',
    options: [
      ['LogConsumeEnabled', BOOL],
      ['ErrorLogEnabled', BOOL],
      ['LogCleanupDays', int(0, 3_650)],
    ],
  },
  {
    id: 'payment',
    tab: 'operation',
    options: [
      ['PaymentUSDRate', float(0, 1_000_000)],
      ['PaymentMinAmount', int(1, 1_000_000)],
      ['RechargeDiscount', json('object')],
    ],
  },
  {
    id: 'login',
    tab: 'system',
    options: [
      ['ServerAddress', URL],
      ['PasswordLoginEnabled', BOOL],
      ['PasswordRegisterEnabled', BOOL],
      ['RegisterEnabled', BOOL],
      ['EmailVerificationEnabled', BOOL],
      ['EmailDomainRestrictionEnabled', BOOL],
      ['EmailDomainWhitelist', TEXT],
    ],
  },
  {
    id: 'smtp',
    tab: 'system',
    options: [
      ['SMTPServer', TEXT],
      ['SMTPPort', int(1, 65_535)],
      ['SMTPAccount', TEXT],
      ['SMTPFrom', TEXT],
      ['SMTPToken', SECRET],
    ],
  },
  {
    id: 'github',
    tab: 'system',
    options: [
      ['GitHubOAuthEnabled', BOOL],
      ['GitHubClientId', TEXT],
      ['GitHubClientSecret', SECRET],
    ],
  },
  {
    id: 'oidc',
    tab: 'system',
    options: [
      ['OIDCAuthEnabled', BOOL],
      ['OIDCIssuer', URL],
      ['OIDCClientId', TEXT],
      ['OIDCClientSecret', SECRET],
      ['OIDCScopes', TEXT],
      ['OIDCUsernameClaims', TEXT],
      ['OIDCEmailClaims', TEXT],
    ],
  },
  {
    id: 'lark',
    tab: 'system',
    options: [
      ['LarkAuthEnabled', BOOL],
      ['LarkClientId', TEXT],
      ['LarkClientSecret', SECRET],
    ],
  },
  {
    id: 'wechat',
    tab: 'system',
    options: [
      ['WeChatAuthEnabled', BOOL],
      ['WeChatServerAddress', URL],
      ['WeChatServerToken', SECRET],
      ['WeChatAccountQRCodeImageURL', URL],
    ],
  },
  {
    id: 'turnstile',
    tab: 'system',
    options: [
      ['TurnstileCheckEnabled', BOOL],
      ['TurnstileSiteKey', TEXT],
      ['TurnstileSecretKey', SECRET],
    ],
  },
  {
    id: 'telegram',
    tab: 'system',
    options: [
      ['TelegramBotName', TEXT],
      ['TelegramBotToken', SECRET],
      ['TelegramWebhookSecret', SECRET],
    ],
  },
  {
    id: 'uptime',
    tab: 'system',
    options: [
      ['UptimeKumaEnabled', BOOL],
      ['UptimeKumaUrl', URL],
      ['UptimeKumaStatusPageName', TEXT],
    ],
  },
  {
    id: 'site',
    tab: 'other',
    options: [
      ['SystemName', TEXT],
      ['Logo', URL],
      ['Language', LANGUAGE],
      ['Footer', LONG],
    ],
  },
  {
    id: 'content',
    tab: 'other',
    options: [
      ['Notice', LONG],
      ['About', LONG],
      ['HomePageContent', LONG],
    ],
  },
] as const satisfies readonly {
  id: string
  tab: SettingsTab
  options: readonly (readonly [string, OptionKind])[]
}[]

export type SectionId = (typeof SECTIONS)[number]['id']
export type KnownKey = (typeof SECTIONS)[number]['options'][number][0]

/** The settings explained under their input (`settings:hints.<key>`). */
export const HINTED_KEYS = [
  'ServerAddress',
  'TelegramWebhookSecret',
  'ChatCacheEnabled',
  'ChatCacheExpireMinute',
  'ChatCacheRatio',
  'ChatCacheMaxEntries',
  'ChatCacheMaxEntryKB',
  'CircuitBreakerEnabled',
  'CircuitBreakerErrorRatio',
  'LatencyAwareRouting',
] as const satisfies readonly KnownKey[]
export type HintedKey = (typeof HINTED_KEYS)[number]

export function isHintedKey(key: string): key is HintedKey {
  return (HINTED_KEYS as readonly string[]).includes(key)
}

export interface OptionDef {
  key: string
  kind: OptionKind
  known: boolean
}

export interface Section {
  id: SectionId | 'unknown'
  tab: SettingsTab
  defs: OptionDef[]
}

/**
 * Settings the server keeps (for data imported from the one-api family) whose feature is not
 * built yet: Midjourney callbacks (issue #18). A switch that does nothing would mislead, so the
 * console does not offer them.
 */
export const NOT_YET_BUILT = new Set(['MjNotifyEnabled'])

/**
 * The sections of a tab with the keys the server lists; keys the console does not know go to
 * "other" as text.
 */
export function sectionsOf(tab: SettingsTab, serverKeys: string[]): Section[] {
  const known = new Set<string>(SECTIONS.flatMap((s) => s.options.map(([k]) => k)))
  // Only what this server has: an older server may lack some keys.
  const present = new Set(serverKeys)
  const sections: Section[] = SECTIONS.filter((s) => s.tab === tab)
    .map((s) => ({
      id: s.id,
      tab: s.tab,
      defs: s.options
        .filter(([key]) => present.has(key))
        .map(([key, kind]) => ({ key, kind: kind as OptionKind, known: true })),
    }))
    .filter((s) => s.defs.length > 0)
  if (tab === 'other') {
    const extra = serverKeys.filter((k) => !known.has(k) && !NOT_YET_BUILT.has(k))
    if (extra.length) sections.push({ id: 'unknown', tab, defs: extra.map((key) => ({ key, kind: { type: 'text' }, known: false })) })
  }
  return sections
}
