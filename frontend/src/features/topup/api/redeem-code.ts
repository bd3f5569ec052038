import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { TopupResult } from '../types'

export function redeemCode(key: string): Promise<TopupResult> {
  return api.post<TopupResult>('/api/user/topup', { key })
}

/** POST /api/user/topup {key}: redeems a code once → {quota, balance, group}. */
export function useRedeemCode() {
  return useMutation({ mutationFn: redeemCode })
}
