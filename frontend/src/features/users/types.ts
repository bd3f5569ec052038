/** A user as administrators see it (GET /api/user, GET /api/user/{id}). */
export interface ManagedUser {
  id: number
  username: string
  display_name: string
  role: number
  /** 1 enabled, 2 disabled. */
  status: number
  email: string
  avatar_url: string
  group: string
  quota: number
  used_quota: number
  request_count: number
  aff_code: string
  aff_count: number
  aff_quota: number
  aff_history_quota: number
  inviter_id: number
  github_id: string
  oidc_id: string
  lark_id: string
  wechat_id: string
  telegram_id: string
  has_access_token: boolean
  created_at: number
  last_login_at: number
}

export const USER_STATUS = {
  enabled: 1,
  disabled: 2,
} as const

export type ManageAction = 'enable' | 'disable' | 'delete' | 'promote' | 'demote'

/** GET /api/user_group_map: the groups an administrator may assign, keyed by symbol. */
export type GroupMap = Record<string, { name: string; ratio: number; api_rate: number; public: boolean }>
