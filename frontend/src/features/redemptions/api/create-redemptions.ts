import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { RedemptionCreatePayload } from '../schemas'
import { redemptionKeys } from './keys'

export function createRedemptions(payload: RedemptionCreatePayload): Promise<{ codes: string[] }> {
  return api.post<{ codes: string[] }>('/api/redemption', payload)
}

/** POST /api/redemption {name, quota, count} → {codes}. */
export function useCreateRedemptions() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createRedemptions,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: redemptionKeys.lists() }),
  })
}
