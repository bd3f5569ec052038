import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { OptionItem } from '../types'
import { settingsKeys } from './keys'

/** The site status query (features/site); named here so features stay independent. */
const SITE_STATUS_KEY = ['site', 'status'] as const

export const getOptions = (signal?: AbortSignal) => api.get<OptionItem[]>('/api/option', { signal })

/** GET /api/option (administrators): every setting the caller manages, secrets blank. */
export function useOptions() {
  return useQuery(queryOptions({ queryKey: settingsKeys.options(), queryFn: ({ signal }) => getOptions(signal) }))
}

export const updateOptions = (options: { key: string; value: string | boolean }[]) =>
  api.put<{ key: string; value: string }[]>('/api/option/batch', { options })

/**
 * PUT /api/option/batch {options}: the changes of one Save, validated by the server and written
 * all together or, when one is refused, not at all.
 */
export function useUpdateOptions() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: async (changes: { key: string; value: string | boolean }[]) => {
      await updateOptions(changes)
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
