import { usePage } from '@/lib/list-query'
import type { Redemption } from '../types'
import { redemptionKeys, type RedemptionListParams } from './keys'

/** GET /api/redemption: codes, newest first; keyword (name, whole code or id), status, paging. */
export function useRedemptions(params: RedemptionListParams) {
  return usePage<Redemption>('/api/redemption', redemptionKeys.list(params), params)
}
