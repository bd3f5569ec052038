import { useMemo, useState, type FormEvent } from 'react'
import { useSearchParams } from 'react-router'
import { PAGE_SIZES, type DataPaginationProps } from '@/components/data-pagination'
import { notify } from '@/lib/toast'

/** Filters: each a text, a number or a yes/no. */
export type FilterValues<F = Record<string, unknown>> = { [K in keyof F]: string | number | boolean }
type AnyFilters = Record<string, string | number | boolean>

export interface ListScreenOptions<F extends FilterValues<F>> {
  /** Every filter with its default (what an empty address bar means); the default's type is the filter's. */
  filters: F
  /** Before every key in the address bar, for two lists on one screen. */
  prefix?: string
  /** Filters that only order the list: changing them does not make it "filtered". */
  orderKeys?: readonly (keyof F)[]
  /** Default page size. */
  size?: number
}

const wholeNumber = (v: string | null, fallback: number, min = 0) => {
  if (v === null || !/^\d+$/.test(v)) return fallback
  const n = Number(v)
  return Number.isSafeInteger(n) && n >= min ? n : fallback
}

/** The filters an address bar names; anything missing or malformed takes its default. */
function readFilters<F extends FilterValues<F>>(search: URLSearchParams, defaults: F, prefix: string): F {
  const out: AnyFilters = {}
  for (const [key, fallback] of Object.entries(defaults as AnyFilters)) {
    const raw = search.get(prefix + key)
    if (typeof fallback === 'number') out[key] = wholeNumber(raw, fallback)
    else if (typeof fallback === 'boolean') out[key] = raw === null ? fallback : raw === '1'
    else out[key] = raw === null ? fallback : raw.trim()
  }
  return out as F
}

const trimmed = <F extends FilterValues<F>>(f: F): F =>
  Object.fromEntries(Object.entries(f).map(([k, v]) => [k, typeof v === 'string' ? v.trim() : v])) as F

/**
 * The state of a list screen. The filters in force and the page live in the address bar (a
 * reload, a shared link and back/forward keep them; only what differs from the defaults is
 * written), the filter form's draft beside them; paging, going back a page when a deletion
 * empties it, and the create/edit and delete dialogs' state.
 */
export function useListScreen<T, F extends FilterValues<F> = Record<never, never>>(options: ListScreenOptions<F>) {
  const { filters: defaults, prefix = '', orderKeys = [], size: defaultSize = 10 } = options
  const base = defaults as AnyFilters
  const [search, setSearch] = useSearchParams()
  const ownKeys = useMemo(() => [...Object.keys(defaults), 'page', 'size'].map((k) => prefix + k), [defaults, prefix])
  // This list's part of the address bar: what its state follows.
  const keyOf = (s: URLSearchParams) => ownKeys.map((k) => `${k}=${s.get(k) ?? ''}`).join('&')
  const key = keyOf(search)
  const filters = useMemo(
    () => readFilters(new URLSearchParams(key), defaults, prefix),
    [key, defaults, prefix],
  )
  const page = wholeNumber(search.get(`${prefix}page`), 1, 1)
  const sizeRead = wholeNumber(search.get(`${prefix}size`), defaultSize, 1)
  const size = (PAGE_SIZES as readonly number[]).includes(sizeRead) ? sizeRead : defaultSize

  // The form follows the address bar (a reload, back/forward); typing changes only the form. A
  // change this list makes itself may name the form it leaves (`next`), kept once the address
  // bar (updated in a transition) shows it.
  type Draft = { key: string; draft: F; next?: { key: string; draft: F } }
  const [draftState, setDraftState] = useState<Draft>({ key, draft: filters })
  if (draftState.key !== key) setDraftState({ key, draft: draftState.next?.key === key ? draftState.next.draft : filters })
  const draft = draftState.key !== key ? filters : (draftState.next?.draft ?? draftState.draft)
  const setDraft = (next: F) => setDraftState((s) => (s.next ? { ...s, next: { ...s.next, draft: next } } : { key, draft: next }))

  /** The address bar with this list's part replaced: only what differs from the defaults. */
  const searchWith = (prev: URLSearchParams, next: F, nextPage: number, nextSize: number) => {
    const s = new URLSearchParams(prev)
    for (const k of ownKeys) s.delete(k)
    for (const [k, v] of Object.entries(next as AnyFilters)) {
      if (v === base[k]) continue
      s.set(prefix + k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v))
    }
    if (nextPage !== 1) s.set(`${prefix}page`, String(nextPage))
    if (nextSize !== defaultSize) s.set(`${prefix}size`, String(nextSize))
    return s
  }
  const go = (next: F, nextPage: number, nextSize: number, replace = false) =>
    setSearch((prev) => searchWith(prev, next, nextPage, nextSize), { replace })

  const deleted = (count: number, shown: number) => {
    if (page > 1 && count >= shown) go(filters, page - 1, size)
  }

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<T | undefined>()
  const [deleting, setDeleting] = useState<T | null>(null)

  return {
    /** This list's part of the address bar: state kept per view (a selection) can follow it. */
    key,
    filters,
    page,
    size,
    /** The filters in force with the page: what the list's query takes. */
    params: { ...filters, page, size },
    /** Whether any filter (not the order) differs from its default. */
    filtered: Object.keys(base).some((k) => !(orderKeys as readonly string[]).includes(k) && (filters as AnyFilters)[k] !== base[k]),
    draft,
    setDraft: (patch: Partial<F>) => setDraft({ ...draft, ...patch }),
    /** A form control's value and change handler for a text or number filter of the draft. */
    bind: (k: keyof F & string) => ({
      value: draft[k] as string | number,
      onChange: (e: { target: { value: string } }) =>
        setDraft({ ...draft, [k]: typeof base[k] === 'number' ? Number(e.target.value) : e.target.value }),
    }),
    /** The form's submit: the draft (trimmed) in force, from page 1. */
    search: (e?: FormEvent) => {
      e?.preventDefault()
      go(trimmed(draft), 1, size)
    },
    /** Every filter back to its default, from page 1. */
    reset: () => go(defaults, 1, size),
    /**
     * Some filters in force at once (a select, a tag clicked), from page 1; the form shows them
     * too. `replace` keeps it out of the history (a search as one types).
     */
    setFilters: (patch: Partial<F>, { replace = false } = {}) => {
      const next = { ...filters, ...patch }
      // What else the form holds stays (a search typed, not sent).
      setDraftState({ key, draft, next: { key: keyOf(searchWith(search, next, 1, size)), draft: { ...draft, ...patch } } })
      go(next, 1, size, replace)
    },
    setPage: (p: number) => go(filters, p, size),
    /** The paging under the list. */
    pagination: (total: number): DataPaginationProps => ({
      page,
      size,
      total,
      onPageChange: (p) => go(filters, p, size),
      onSizeChange: (s) => go(filters, 1, s),
    }),
    /** After deleting `count` of the `shown` rows: back a page when none is left on this one. */
    deleted,
    /** The create/edit dialog: `editing` undefined for a new row. */
    form: {
      open: formOpen,
      editing,
      onOpenChange: setFormOpen,
      create: () => {
        setEditing(undefined)
        setFormOpen(true)
      },
      edit: (row: T) => {
        setEditing(row)
        setFormOpen(true)
      },
    },
    /** The row the delete dialog asks about. */
    deleting,
    setDeleting,
    /**
     * The delete dialog's confirm: `remove` the row; once removed, `message` is told, the dialog
     * closes, and the list goes back a page if that was the last of the `shown` rows.
     */
    confirmDelete: (remove: (row: T, done: { onSuccess: () => void }) => void, message: string, shown: number) => () => {
      if (!deleting) return
      remove(deleting, {
        onSuccess: () => {
          notify.success(message)
          setDeleting(null)
          deleted(1, shown)
        },
      })
    },
    /** The delete dialog's open state. */
    deleteDialog: { open: deleting !== null, onOpenChange: (open: boolean) => !open && setDeleting(null) },
  }
}

/** One page of a list the server answers whole: the page is kept within the list's pages. */
export function pageOf<R>(all: readonly R[], page: number, size: number) {
  const pages = Math.max(1, Math.ceil(all.length / size))
  const at = Math.min(page, pages)
  return { rows: all.slice((at - 1) * size, at * size), page: at }
}

/** What useListScreen gives a screen. */
export type ListScreen<T, F extends FilterValues<F>> = ReturnType<typeof useListScreen<T, F>>
