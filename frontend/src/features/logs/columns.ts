import { readJSON, removeKey, writeJSON } from '@/lib/storage'
import type { LogScope } from './api/keys'

/** The logs table's columns (spec 2.2, "Logs, with column settings"). */
export const LOG_COLUMNS = [
  'time',
  'user',
  'channel',
  'type',
  'model',
  'token',
  'group',
  'promptTokens',
  'completionTokens',
  'quota',
  'duration',
  'ip',
  'detail',
] as const
export type LogColumn = (typeof LOG_COLUMNS)[number]

/** Never hidden: without them a row means nothing (and the detail holds everything else). */
export const ESSENTIAL: ReadonlySet<LogColumn> = new Set(['time', 'model', 'quota', 'detail'])
/** Only administrators have them. */
const ADMIN_COLUMNS: ReadonlySet<LogColumn> = new Set(['user', 'channel'])
/** Shown until someone hides them. */
const HIDDEN_BY_DEFAULT: ReadonlySet<LogColumn> = new Set(['ip'])

export function columnsFor(scope: LogScope): LogColumn[] {
  return LOG_COLUMNS.filter((c) => scope === 'all' || !ADMIN_COLUMNS.has(c))
}

export function defaultVisible(scope: LogScope): LogColumn[] {
  return columnsFor(scope).filter((c) => !HIDDEN_BY_DEFAULT.has(c))
}

const storageKey = (scope: LogScope) => `logColumns.${scope}`

/** The columns shown, as the user last chose them on this browser (essential ones always). */
export function loadVisible(scope: LogScope): LogColumn[] {
  const saved = readJSON<unknown>(storageKey(scope))
  if (!Array.isArray(saved)) return defaultVisible(scope)
  const chosen = new Set(saved.filter((c): c is string => typeof c === 'string'))
  return columnsFor(scope).filter((c) => ESSENTIAL.has(c) || chosen.has(c))
}

export function saveVisible(scope: LogScope, visible: LogColumn[]): void {
  writeJSON(storageKey(scope), visible)
}

export function resetVisible(scope: LogScope): LogColumn[] {
  removeKey(storageKey(scope))
  return defaultVisible(scope)
}
