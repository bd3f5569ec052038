/** A user group as edited by administrators (GET /api/user_group). */
export interface UserGroup {
  id: number
  /** Unique English identifier, immutable once created. */
  symbol: string
  name: string
  /** Price ratio (>= 0). */
  ratio: number
  public: boolean
  /** Requests per minute; 0 = no limit. */
  api_rate: number
  /** Automatic promotion into this group after top-ups in [min_topup, max_topup). */
  promotion: boolean
  /** Quota units. */
  min_topup: number
  /** Quota units; 0 = no upper bound. */
  max_topup: number
  enabled: boolean
  created_at: number
  updated_at: number
}
