import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { channelKeys } from './keys'

export interface BatchValueBody {
  /** The channels to edit; left out = every (Azure) channel. */
  ids?: number[]
  value: string
}

export interface BatchAzureResult {
  updated: number
  ids: number[]
}

export interface BatchRemoveModelResult extends BatchAzureResult {
  /** Names of the channels that had only this model and kept it. */
  kept: string[]
}

export function batchAzureApi(body: BatchValueBody): Promise<BatchAzureResult> {
  return api.put<BatchAzureResult>('/api/channel/batch/azure_api', body)
}

export function batchRemoveModel(body: BatchValueBody): Promise<BatchRemoveModelResult> {
  return api.put<BatchRemoveModelResult>('/api/channel/batch/del_model', body)
}

function useBatchMutation<R>(fn: (body: BatchValueBody) => Promise<R>) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: fn,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.all }),
  })
}

/** PUT /api/channel/batch/azure_api {ids?, value}: the API version of the Azure channels → {updated, ids}. */
export const useBatchAzureApi = () => useBatchMutation(batchAzureApi)

/** PUT /api/channel/batch/del_model {ids?, value}: removes a model → {updated, ids, kept}. */
export const useBatchRemoveModel = () => useBatchMutation(batchRemoveModel)
