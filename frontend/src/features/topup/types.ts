/** Answer of POST /api/user/topup. */
export interface TopupResult {
  /** Quota credited by the code. */
  quota: number
  /** The user's quota after the credit. */
  balance: number
  /** The user's group after any automatic promotion. */
  group: string
}
