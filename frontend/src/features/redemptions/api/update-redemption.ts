import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Redemption } from '../types'
import { redemptionKeys } from './keys'

export interface UpdateRedemptionPayload {
  id: number
  name?: string
  quota?: number
  status?: 1 | 2
}

export function updateRedemption(payload: UpdateRedemptionPayload): Promise<Redemption> {
  return api.put<Redemption>('/api/redemption', payload)
}

/** PUT /api/redemption {id, name?, quota?, status?}: used codes cannot change (409). */
export function useUpdateRedemption() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateRedemption,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: redemptionKeys.lists() }),
  })
}
