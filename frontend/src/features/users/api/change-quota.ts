import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { ManagedUser } from '../types'
import { userKeys } from './keys'

export function changeQuota({ id, ...body }: { id: number; quota: number; remark: string }): Promise<ManagedUser> {
  return api.post<ManagedUser>(`/api/user/quota/${id}`, body)
}

/** POST /api/user/quota/{id} {quota: ±amount, remark}: writes a management log. */
export function useChangeQuota() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: changeQuota,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: userKeys.lists() }),
  })
}
