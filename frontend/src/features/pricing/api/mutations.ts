import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Price, PricePayload, SyncMode, SyncResult } from '../types'
import { pricingKeys } from './keys'

export const createPrice = (price: PricePayload) => api.post<Price>('/api/prices', price)
/** `model` is the row being edited; `price.model` may rename it. */
export const updatePrice = (body: { model: string; price: PricePayload }) => api.put<Price>('/api/prices', body)
export const deletePrices = (models: string[]) => api.post<{ deleted: number }>('/api/prices/delete', { models })
export const batchPrices = (prices: unknown[]) => api.post<{ count: number }>('/api/prices/batch', { prices })

function usePriceMutation<V, R>(fn: (v: V) => Promise<R>) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: fn,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: pricingKeys.all }),
  })
}

/** POST /api/prices. */
export const useCreatePrice = () => usePriceMutation(createPrice)
/** PUT /api/prices {model, price}. */
export const useUpdatePrice = () => usePriceMutation(updatePrice)
/** POST /api/prices/delete {models}. */
export const useDeletePrices = () => usePriceMutation(deletePrices)
/** POST /api/prices/batch {prices}: create or replace many rows, all or nothing. */
export const useBatchPrices = () => usePriceMutation(batchPrices)

export const syncPrices = (body: { mode: SyncMode; url: string; dry_run: boolean }) =>
  api.post<SyncResult>('/api/prices/sync', body)

/** POST /api/prices/sync {mode, url, dry_run}: merge a remote price list (locked rows stay). */
export const useSyncPrices = () => usePriceMutation(syncPrices)
