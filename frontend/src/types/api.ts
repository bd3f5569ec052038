/** Every Switchboard API response is wrapped in this envelope. */
export interface ApiEnvelope<T> {
  success: boolean
  message: string
  data?: T
  /** Stable snake_case error identifier, when the server sends one. */
  code?: string
}

/** Role numbers used by the server. A user is an administrator when role >= 10. */
export const ROLE = {
  guest: 0,
  user: 1,
  admin: 10,
  root: 100,
} as const

export interface User {
  id: number
  username: string
  display_name: string
  role: number
  status: number
  email: string
  group: string
  quota: number
  used_quota: number
  request_count: number
  avatar_url: string
  /** Invitation code, invitees and the reward earned by inviting (spec 3). */
  aff_code?: string
  aff_count?: number
  aff_quota?: number
  aff_history_quota?: number
  /** Third-party identities bound to the account; empty (or absent) when not bound. */
  github_id?: string
  oidc_id?: string
  lark_id?: string
  wechat_id?: string
  /** Telegram's numeric chat id; 0 when not bound. */
  telegram_id?: number
  /** The console language the user chose (e-mails to the user are written in it); empty: the site's. */
  language?: string
}

/** GET /api/user_group_map: the groups this user may use, keyed by symbol (spec 3, "User group map"). */
export type UserGroupMap = Record<string, { id?: number; symbol?: string; name: string; ratio: number; api_rate: number; public?: boolean }>

/** Site information from GET /api/status (only the fields the console reads; more may arrive). */
export interface SiteInfo {
  system_name: string
  version: string
  language: string
  logo: string
  footer_html: string
  quota_per_unit: number
  display_in_currency: boolean
  chat_link: string
  /** Chat-client link templates (spec 3, "Chat-link entry"); parse with lib/chat-links. */
  chat_links: unknown
  top_up_link: string
  server_address: string
  start_time: number
  email_verification: boolean
  github_oauth: boolean
  github_client_id: string
  oidc_auth: boolean
  wechat_login: boolean
  wechat_qrcode: string
  lark_login: boolean
  lark_client_id: string
  telegram_bot: string
  turnstile_check: boolean
  turnstile_site_key: string
  UptimeEnabled: boolean
  UptimeDomain: string
  UptimePageName: string
  UserInvoiceMonth: boolean
  /** The smallest online top-up in USD (setting PaymentMinAmount), when the server sends it. */
  payment_min_amount?: number
}

/** A list answer: `data = {data, page, size, total_count}`. */
export interface Page<T> {
  data: T[]
  page: number
  size: number
  /** Null with keyset paging (logs with before_id). */
  total_count: number | null
}

/** Token (API key) status; 3 and 4 are computed by the server (spec section 3). */
export const TOKEN_STATUS = {
  enabled: 1,
  disabled: 2,
  expired: 3,
  exhausted: 4,
} as const

/** An API key as listed: `key` is masked (`sk-abcd**wxyz`) except right after creation. */
export interface Token {
  id: number
  user_id: number
  name: string
  key: string
  status: number
  created_at: number
  accessed_at: number
  /** Unix seconds, or -1 for never. */
  expired_at: number
  remain_quota: number
  unlimited_quota: boolean
  used_quota: number
  request_count: number
  group: string
  models: string
  subnet: string
  api_rate: number
  heartbeat_enabled: boolean
  heartbeat_timeout: number
  cache_enabled: boolean
}

/** Log types: 1 recharge, 2 consumption, 3 management, 4 system (0 in a filter means all). */
export const LOG_TYPE = {
  all: 0,
  recharge: 1,
  consume: 2,
  manage: 3,
  system: 4,
} as const

export interface LogEntry {
  id: number
  created_at: number
  type: number
  user_id: number
  username: string
  token_id: number
  token_name: string
  model_name: string
  group: string
  quota: number
  prompt_tokens: number
  completion_tokens: number
  use_time_ms: number
  first_response_ms: number
  is_stream: boolean
  /** Answered from the response cache: no upstream call (channel_id 0). */
  cache_hit: boolean
  source_ip: string
  request_id: string
  content: string
  metadata: unknown
  /** Administrators only. */
  channel_id?: number
  channel_name?: string
}

/** A model owner (GET /api/model_ownedby): ids below 1000 are the built-in channel types. */
export interface SiteModelOwner {
  id: number
  name: string
  icon: string
}
