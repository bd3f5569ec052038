import { queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { aboutKey } from './keys'

export function getAbout(signal?: AbortSignal): Promise<string> {
  return api.get<string>('/api/about', { signal })
}

/** GET /api/about: HTML, a URL (shown in a frame) or empty (the default text). Public. */
export function useAbout() {
  return useQuery(
    queryOptions({ queryKey: aboutKey(), queryFn: ({ signal }) => getAbout(signal), meta: { public: true } }),
  )
}
