import { PAGE_SIZES } from '@/components/data-pagination'
import type { LogListParams, LogScope } from './api/keys'

/* The logs screen's filters and page as they live in the address bar (reload and share keep them). */

const TEXT_KEYS = ['model_name', 'token_name', 'group', 'source_ip', 'username', 'channel'] as const
const ADMIN_ONLY = new Set<string>(['username', 'channel'])

export const EMPTY_PARAMS: LogListParams = {
  type: 0,
  model_name: '',
  token_name: '',
  group: '',
  source_ip: '',
  start_timestamp: 0,
  end_timestamp: 0,
  username: '',
  channel: '',
  page: 1,
  size: 10,
}

const wholeNumber = (v: string | null, fallback: number, min = 0) => {
  if (v === null || !/^\d+$/.test(v)) return fallback
  const n = Number(v)
  return Number.isSafeInteger(n) && n >= min ? n : fallback
}

/** The list parameters a URL names; anything missing or malformed takes its default. */
export function paramsFromSearch(search: URLSearchParams, scope: LogScope): LogListParams {
  const p: LogListParams = { ...EMPTY_PARAMS }
  const type = wholeNumber(search.get('type'), 0)
  p.type = type <= 5 ? type : 0
  for (const key of TEXT_KEYS) {
    if (scope === 'self' && ADMIN_ONLY.has(key)) continue
    p[key] = (search.get(key) ?? '').trim()
  }
  p.start_timestamp = wholeNumber(search.get('start'), 0)
  p.end_timestamp = wholeNumber(search.get('end'), 0)
  p.page = wholeNumber(search.get('page'), 1, 1)
  const size = wholeNumber(search.get('size'), 10, 1)
  p.size = (PAGE_SIZES as readonly number[]).includes(size) ? size : 10
  return p
}

/** The URL search of these parameters: only what differs from the defaults. */
export function searchFromParams(p: LogListParams): URLSearchParams {
  const s = new URLSearchParams()
  if (p.type) s.set('type', String(p.type))
  for (const key of TEXT_KEYS) {
    const v = p[key].trim()
    if (v) s.set(key, v)
  }
  if (p.start_timestamp) s.set('start', String(p.start_timestamp))
  if (p.end_timestamp) s.set('end', String(p.end_timestamp))
  if (p.page !== 1) s.set('page', String(p.page))
  if (p.size !== 10) s.set('size', String(p.size))
  return s
}

const pad = (n: number) => String(n).padStart(2, '0')

/** Unix seconds as the value of a datetime-local input (local time); '' for 0. */
export function toLocalInput(unix: number): string {
  if (!unix) return ''
  const d = new Date(unix * 1000)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** A datetime-local value as unix seconds; 0 for empty or invalid. */
export function fromLocalInput(v: string): number {
  if (!v) return 0
  const ms = new Date(v).getTime()
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0
}
