import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { AvailableModel, ModelOwner, Price, PriceWarnings } from '../types'
import { pricingKeys } from './keys'

export function getPrices(signal?: AbortSignal): Promise<Price[]> {
  return api.get<Price[]>('/api/prices', { signal })
}

/** GET /api/prices: every price row (public). */
export function usePrices() {
  return useQuery(queryOptions({ queryKey: pricingKeys.prices(), queryFn: ({ signal }) => getPrices(signal) }))
}

export function getAvailableModels(signal?: AbortSignal): Promise<AvailableModel[]> {
  return api.get<AvailableModel[]>('/api/available_model', { signal })
}

/** GET /api/available_model: the models the user's group may call, with their prices. */
export function useAvailableModels() {
  return useQuery(
    queryOptions({ queryKey: pricingKeys.available(), queryFn: ({ signal }) => getAvailableModels(signal) }),
  )
}

export function getModelOwners(signal?: AbortSignal): Promise<ModelOwner[]> {
  return api.get<ModelOwner[]>('/api/model_ownedby', { signal })
}

/** GET /api/model_ownedby: owner names for the prices' channel types (public). */
export function useModelOwners() {
  return useQuery(
    queryOptions({
      queryKey: pricingKeys.owners(),
      queryFn: ({ signal }) => getModelOwners(signal),
      staleTime: 5 * 60_000,
    }),
  )
}

export function getPriceWarnings(signal?: AbortSignal): Promise<PriceWarnings> {
  return api.get<PriceWarnings>('/api/prices/warnings', { signal })
}

/** GET /api/prices/warnings (admin): unpriced models and prices with an unknown owner. */
export function usePriceWarnings() {
  return useQuery(
    queryOptions({ queryKey: pricingKeys.warnings(), queryFn: ({ signal }) => getPriceWarnings(signal) }),
  )
}
