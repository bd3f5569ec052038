import { queryOptions, useQuery } from '@tanstack/react-query'
import { STORAGE_KEYS } from '@/config'
import { api } from '@/lib/api'
import { readString, writeString } from '@/lib/storage'
import { createStore, useStore } from '@/stores/create-store'

/** GET /api/notice: the operator's announcement (HTML), fetched once at start. */
export function noticeQueryOptions() {
  return queryOptions({
    queryKey: ['notice'] as const,
    queryFn: ({ signal }) => api.get<string>('/api/notice', { signal }).then((d) => (typeof d === 'string' ? d : '')),
    staleTime: Infinity,
    retry: 1,
  })
}

export function useNoticeQuery() {
  return useQuery(noticeQueryOptions())
}

interface NoticeState {
  /** The text shown: the newest from the server, else the stored copy. */
  text: string
  open: boolean
}

export const noticeStore = createStore<NoticeState>({ text: readString(STORAGE_KEYS.notice) ?? '', open: false })

export function useNotice(): NoticeState {
  return useStore(noticeStore)
}

export function openNotice(): void {
  noticeStore.set((s) => ({ ...s, open: true }))
}

export function closeNotice(): void {
  noticeStore.set((s) => ({ ...s, open: false }))
}

/**
 * The notice rule (spec section 3, "Notice"): a notice that differs from the stored one opens
 * the dialog and is stored; an empty or unchanged one keeps the stored copy and the dialog closed.
 */
export function receiveNotice(fetched: string): void {
  const text = fetched.trim()
  const stored = readString(STORAGE_KEYS.notice) ?? ''
  if (text && text !== stored) {
    writeString(STORAGE_KEYS.notice, text)
    noticeStore.set({ text, open: true })
    return
  }
  noticeStore.set((s) => ({ ...s, text: stored }))
}
