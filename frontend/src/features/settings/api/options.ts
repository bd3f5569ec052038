import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { OptionItem } from '../types'
import { settingsKeys } from './keys'

/** The site status query (features/site); named here so features stay independent. */
const SITE_STATUS_KEY = ['site', 'status'] as const

export const getOptions = (signal?: AbortSignal) => api.get<OptionItem[]>('/api/option', { signal })

/** GET /api/option (root): every setting, secrets blank. */
export function useOptions() {
  return useQuery(queryOptions({ queryKey: settingsKeys.options(), queryFn: ({ signal }) => getOptions(signal) }))
}

export const updateOption = (body: { key: string; value: string | boolean | number }) =>
  api.put<{ key: string; value: string }>('/api/option', body)

/** PUT /api/option {key, value}: one setting, validated by the server. */
export function useUpdateOptions() {
  const queryClient = useQueryClient()
  return useMutation({
    /** Sends the changes one by one, in order; stops at the first refusal. */
    mutationFn: async (changes: { key: string; value: string | boolean }[]) => {
      for (const c of changes) await updateOption(c)
      return changes.length
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: settingsKeys.options() })
      // Many settings are part of the public site status (name, currency display, invoice
      // flag...): read it again so the console reflects them without a reload.
      void queryClient.invalidateQueries({ queryKey: SITE_STATUS_KEY })
    },
  })
}
