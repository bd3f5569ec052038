/** A redemption code's status: 1 unused (enabled), 2 disabled, 3 used. */
export const REDEMPTION_STATUS = {
  enabled: 1,
  disabled: 2,
  used: 3,
} as const

/** A redemption code as listed by GET /api/redemption. */
export interface Redemption {
  id: number
  user_id: number
  name: string
  code: string
  status: number
  quota: number
  created_at: number
  /** Unix seconds; 0 while not redeemed. */
  redeemed_at: number
  used_user_id: number
}
