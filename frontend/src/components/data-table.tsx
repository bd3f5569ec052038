import { ArrowDownIcon, ArrowUpDownIcon, ArrowUpIcon, Columns3Icon } from 'lucide-react'
import { Fragment, useState, type HTMLAttributes, type Key, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination, type DataPaginationProps } from '@/components/data-pagination'
import { ListState } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import {
  DropdownMenu,
  DropdownMenuCheckboxItem,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { MOBILE_MAX_WIDTH } from '@/config'
import { useMediaQuery } from '@/hooks/use-media-query'
import { readJSON, removeKey, writeJSON } from '@/lib/storage'
import { cn } from '@/lib/utils'
import type { Page } from '@/types/api'

/**
 * One column of a list: its heading, how a row fills its cell, and its part on a phone card.
 * The same definitions draw the table on wider screens and the cards on a phone.
 */
export interface Column<T> {
  id: string
  /** The heading; also each card line's label and the column settings' entry. */
  header: string
  /** The heading cell's content when not the plain heading (a select-all box). */
  head?: ReactNode
  cell: (row: T) => ReactNode
  /** Classes of the heading and of every cell. */
  className?: string
  /** More classes of the cells only. */
  cellClassName?: string
  /** data-testid of every cell of the column. */
  testId?: string
  /** On a phone card: the heading line, the buttons at the foot, or left off. Else a "label: value" line. */
  card?: 'title' | 'actions' | 'hide'
  /** Right-aligned (numbers). */
  right?: boolean
  /**
   * The orders (`field` / `-field`) clicking the heading goes through, first one first; the
   * list's `sort` holds the one in force.
   */
  sortBy?: readonly string[]
  /** Value compared when the list sorts itself by this column (`sortRows`). */
  sortValue?: (row: T) => string | number
  /** Never hidden by the column settings. */
  essential?: boolean
  /** Hidden until someone shows it in the column settings. */
  hiddenByDefault?: boolean
  /** How many columns this row's cell spans (the next ones are not drawn for it). */
  span?: (row: T) => number | undefined
}

/** A column of selection boxes: one per row, and one that selects the rows shown. */
export function selectColumn<T, K extends Key>({
  selected,
  rows,
  keyOf,
  onChange,
  allLabel,
  rowLabel,
  testId,
}: {
  selected: ReadonlySet<K>
  rows: readonly T[]
  keyOf: (row: T) => K
  onChange: (next: Set<K>) => void
  allLabel: string
  rowLabel: (row: T) => string
  /** data-testid of the row boxes; `${testId}-page` on the heading's box. */
  testId?: string
}): Column<T> {
  const all = rows.length > 0 && rows.every((r) => selected.has(keyOf(r)))
  const toggleAll = () => {
    const next = new Set(selected)
    for (const r of rows) {
      if (all) next.delete(keyOf(r))
      else next.add(keyOf(r))
    }
    onChange(next)
  }
  const toggle = (key: K) => {
    const next = new Set(selected)
    if (!next.delete(key)) next.add(key)
    onChange(next)
  }
  const box = 'size-4 accent-primary'
  return {
    id: 'select',
    header: '',
    essential: true,
    card: 'hide',
    className: 'w-8',
    head: (
      <input
        type="checkbox"
        className={box}
        checked={all}
        onChange={toggleAll}
        aria-label={allLabel}
        data-testid={testId && `${testId}-page`}
      />
    ),
    cell: (row) => (
      <input
        type="checkbox"
        className={box}
        checked={selected.has(keyOf(row))}
        onChange={() => toggle(keyOf(row))}
        aria-label={rowLabel(row)}
        data-testid={testId}
      />
    ),
  }
}

/** The row's buttons, as the last column (at a card's foot on a phone, kept in view on wider screens). */
export function actionsColumn<T>(header: string, cell: (row: T) => ReactNode): Column<T> {
  return {
    id: 'actions',
    header,
    essential: true,
    card: 'actions',
    right: true,
    cell: (row) => <div className="flex justify-end gap-1">{cell(row)}</div>,
  }
}

/** The rows in the order `sort` names (`field` ascending, `-field` descending), by the column's sortValue. */
export function sortRows<T>(rows: readonly T[], columns: readonly Column<T>[], sort: string): T[] {
  const desc = sort.startsWith('-')
  const column = columns.find((c) => c.sortBy?.includes(sort) && c.sortValue)
  if (!column?.sortValue) return [...rows]
  const value = column.sortValue
  return [...rows].sort((a, b) => {
    const x = value(a)
    const y = value(b)
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))
    return desc ? -order : order
  })
}

export interface ColumnSettings {
  /** localStorage key of the columns shown. */
  storageKey: string
  /** Test ids: `${testId}s` the menu's button, `${testId}-${column}` its entries, `${testId}s-reset`. */
  testId: string
}

const defaultShown = <T,>(columns: readonly Column<T>[]) => columns.filter((c) => !c.hiddenByDefault).map((c) => c.id)

/** The ids of the columns shown: as last chosen on this browser, the essential ones always. */
function loadShown<T>(columns: readonly Column<T>[], key: string | undefined): string[] {
  const saved = key ? readJSON<unknown>(key) : null
  if (!Array.isArray(saved)) return defaultShown(columns)
  return columns.filter((c) => c.essential || saved.includes(c.id)).map((c) => c.id)
}

/** Which columns are shown, remembered per list in localStorage. */
function useShownColumns<T>(columns: readonly Column<T>[], settings: ColumnSettings | undefined) {
  const key = settings?.storageKey
  const [state, setState] = useState(() => ({ key, shown: loadShown(columns, key) }))
  // Another list's choice (the scope changed): read it.
  if (state.key !== key) setState({ key, shown: loadShown(columns, key) })
  const shown = new Set(state.shown)
  const visible = settings ? columns.filter((c) => c.essential || shown.has(c.id)) : columns
  const toggle = (id: string, on: boolean) => {
    const next = columns.filter((c) => (c.id === id ? on : c.essential || shown.has(c.id))).map((c) => c.id)
    setState({ key, shown: next })
    if (key) writeJSON(key, next)
  }
  const reset = () => {
    if (key) removeKey(key)
    setState({ key, shown: defaultShown(columns) })
  }
  return { visible, shown, toggle, reset }
}

function ColumnSettingsMenu<T>({
  columns,
  settings,
  shown,
  onToggle,
  onReset,
}: {
  columns: readonly Column<T>[]
  settings: ColumnSettings
  shown: ReadonlySet<string>
  onToggle: (id: string, on: boolean) => void
  onReset: () => void
}) {
  const { t } = useTranslation()
  return (
    <div className="flex items-center justify-end border-b px-3 py-2">
      <DropdownMenu>
        <DropdownMenuTrigger asChild>
          <Button variant="ghost" size="sm" data-testid={`${settings.testId}s`}>
            <Columns3Icon />
            {t('common:columnSettings.open')}
          </Button>
        </DropdownMenuTrigger>
        <DropdownMenuContent align="end">
          <DropdownMenuLabel>{t('common:columnSettings.title')}</DropdownMenuLabel>
          {columns
            .filter((c) => c.header && c.card !== 'actions')
            .map((c) => (
              <DropdownMenuCheckboxItem
                key={c.id}
                checked={c.essential || shown.has(c.id)}
                disabled={c.essential}
                onCheckedChange={(on) => onToggle(c.id, on === true)}
                onSelect={(e) => e.preventDefault()}
                data-testid={`${settings.testId}-${c.id}`}
              >
                {c.header}
              </DropdownMenuCheckboxItem>
            ))}
          <DropdownMenuSeparator />
          <DropdownMenuItem onSelect={onReset} data-testid={`${settings.testId}s-reset`}>
            {t('common:columnSettings.reset')}
          </DropdownMenuItem>
        </DropdownMenuContent>
      </DropdownMenu>
    </div>
  )
}

/** A heading that sorts the list: each click takes the column's next order. */
function SortHeading({ header, sortBy, sort, onSort }: { header: string; sortBy: readonly string[]; sort: string; onSort: (s: string) => void }) {
  const at = sortBy.indexOf(sort)
  const Icon = at < 0 ? ArrowUpDownIcon : sort.startsWith('-') ? ArrowDownIcon : ArrowUpIcon
  return (
    <button
      type="button"
      className="inline-flex items-center gap-1 hover:text-foreground"
      onClick={() => onSort(sortBy[(at + 1) % sortBy.length] ?? sort)}
    >
      {header}
      <Icon aria-hidden className={cn('size-3.5', at < 0 && 'opacity-40')} />
    </button>
  )
}

const cellClass = <T,>(c: Column<T>) => cn(c.className, c.right && 'text-right', c.cellClassName)

/** The cells of a row, each column once, those a wider cell covers left out. */
function rowCells<T>(row: T, columns: readonly Column<T>[]) {
  const cells: { column: Column<T>; span?: number }[] = []
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!
    const span = column.span?.(row)
    cells.push({ column, span })
    if (span && span > 1) i += span - 1
  }
  return cells
}

/** A phone's card of one row: its title line, a "label: value" line per column, its buttons last. */
function RowCard<T>({ row, columns, rowProps }: { row: T; columns: readonly Column<T>[]; rowProps?: HTMLAttributes<HTMLElement> }) {
  return (
    <li data-slot="data-card" {...rowProps}>
      {rowCells(row, columns)
        .filter(({ column }) => column.card !== 'hide')
        .map(({ column }) => (
          <div
            key={column.id}
            data-card={column.card}
            data-label={column.card ? undefined : column.header || undefined}
            className={column.cellClassName}
            data-testid={column.testId}
          >
            {column.cell(row)}
          </div>
        ))}
    </li>
  )
}

export interface DataTableProps<T> {
  columns: readonly Column<T>[]
  /**
   * The list's query: a spinner while pending, its error with a retry when it failed. A page of
   * rows (`{data, total_count}`) gives the rows and, with `list`, the paging.
   */
  query: { isPending: boolean; isError: boolean; error: unknown; refetch: () => unknown; data?: Page<T> | readonly T[] }
  /** The rows shown, when not the query's page. */
  rows?: readonly T[]
  /** A row's key: its `id` unless told. */
  rowKey?: (row: T) => Key
  /**
   * Test ids from a name: `${name}s-table`, `${name}-row-${key}`, `${name}s-empty`, and
   * `${name}-column…` for the column settings.
   */
  name?: string
  testId?: string
  rowTestId?: string
  emptyTestId?: string
  /** More attributes of a row (a selected state, a colour). */
  rowProps?: (row: T) => HTMLAttributes<HTMLElement> & { 'data-state'?: string }
  emptyText: string
  /** The order in force and how to change it (columns with `sortBy` sort on a click). */
  sort?: { value: string; onChange: (sort: string) => void }
  /** A menu to hide and show columns, remembered on this browser (`true`: keyed by the name). */
  settings?: ColumnSettings | boolean
  /** The list screen whose page the paging under the card shows (nothing when there is no row at all). */
  list?: { pagination: (total: number) => DataPaginationProps }
  /** The paging, when not the list's of the query's total. */
  pagination?: DataPaginationProps
  /** A phone's card of a row, when not the one the columns make. */
  card?: (row: T) => ReactNode
  /** Testid of the card list on a phone (the table's by default). */
  cardsTestId?: string
}

const idOf = (row: unknown) => (row as { id: Key }).id

/**
 * A list's card: the table on wider screens, one card per row on a phone, both from the same
 * columns; the spinner, the error or the empty text instead when there is no row to show; the
 * column settings above and the paging below.
 */
export function DataTable<T>({
  columns,
  query,
  rows: givenRows,
  rowKey = idOf,
  name,
  testId = `${name}s-table`,
  rowTestId = `${name}-row`,
  emptyTestId = `${name}s-empty`,
  rowProps,
  emptyText,
  sort,
  settings: givenSettings,
  list,
  pagination: givenPagination,
  card,
  cardsTestId,
}: DataTableProps<T>) {
  const isPhone = useMediaQuery(`(max-width: ${MOBILE_MAX_WIDTH}px)`)
  const settings = givenSettings === true ? { storageKey: `columns.${name}`, testId: `${name}-column` } : givenSettings || undefined
  const { visible, shown, toggle, reset } = useShownColumns(columns, settings)
  const page = query.data && !Array.isArray(query.data) ? (query.data as Page<T>) : undefined
  const rows = givenRows ?? page?.data ?? []
  const pagination = givenPagination ?? (list && page ? list.pagination(page.total_count ?? 0) : undefined)
  const propsOf = (row: T) => ({ 'data-testid': `${rowTestId}-${rowKey(row)}`, ...rowProps?.(row) })
  return (
    <>
      <Card>
        {settings && <ColumnSettingsMenu columns={columns} settings={settings} shown={shown} onToggle={toggle} onReset={reset} />}
        <CardContent className="p-0">
          <ListState loading={query.isPending} query={query} empty={rows.length === 0} emptyText={emptyText} emptyTestId={emptyTestId}>
            {isPhone ? (
              <ul className="divide-y" data-slot="data-cards" data-testid={cardsTestId ?? testId}>
                {rows.map((row) =>
                  card ? (
                    <Fragment key={rowKey(row)}>{card(row)}</Fragment>
                  ) : (
                    <RowCard key={rowKey(row)} row={row} columns={visible} rowProps={propsOf(row)} />
                  ),
                )}
              </ul>
            ) : (
              <Table cards data-testid={testId}>
                <TableHeader>
                  <TableRow>
                    {visible.map((c) => (
                      <TableHead
                        key={c.id}
                        data-card={c.card}
                        className={cn(c.className, c.right && 'text-right')}
                        aria-sort={
                          c.sortBy && sort ? (c.sortBy.includes(sort.value) ? (sort.value.startsWith('-') ? 'descending' : 'ascending') : 'none') : undefined
                        }
                      >
                        {c.head ??
                          (c.sortBy && sort ? <SortHeading header={c.header} sortBy={c.sortBy} sort={sort.value} onSort={sort.onChange} /> : c.header)}
                      </TableHead>
                    ))}
                  </TableRow>
                </TableHeader>
                <TableBody>
                  {rows.map((row) => (
                    <TableRow key={rowKey(row)} {...propsOf(row)}>
                      {rowCells(row, visible).map(({ column, span }) => (
                        <TableCell key={column.id} colSpan={span} data-card={column.card} className={cellClass(column)} data-testid={column.testId}>
                          {column.cell(row)}
                        </TableCell>
                      ))}
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            )}
          </ListState>
        </CardContent>
      </Card>
      {pagination && pagination.total > 0 && <DataPagination {...pagination} />}
    </>
  )
}
