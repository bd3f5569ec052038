import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { ModelOwner } from '../types'
import { ownerKeys } from './keys'

export function createOwner(owner: ModelOwner): Promise<unknown> {
  return api.post('/api/model_ownedby', owner)
}

export function updateOwner(owner: ModelOwner): Promise<unknown> {
  return api.put('/api/model_ownedby', owner)
}

/** POST /api/model_ownedby {id, name, icon} (id >= 1000, fixed once set). */
export function useCreateOwner() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createOwner,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ownerKeys.all }),
  })
}

/** PUT /api/model_ownedby {id, name, icon}: the id itself never changes. */
export function useUpdateOwner() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateOwner,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ownerKeys.all }),
  })
}
