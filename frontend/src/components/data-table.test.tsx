import { cleanup, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { useState } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import { renderWithProviders } from '@/test/render'
import { actionsColumn, DataTable, sortRows, type Column } from './data-table'

interface Fruit {
  id: number
  name: string
  price: number
  secret: string
}

const FRUITS: Fruit[] = [
  { id: 1, name: 'banana', price: 3, secret: 's1' },
  { id: 2, name: 'apple', price: 5, secret: 's2' },
  { id: 3, name: 'cherry', price: 1, secret: 's3' },
]

const COLUMNS: Column<Fruit>[] = [
  { id: 'name', header: 'Name', card: 'title', essential: true, sortBy: ['name', '-name'], sortValue: (f) => f.name, cell: (f) => f.name },
  { id: 'price', header: 'Price', right: true, testId: 'fruit-price', sortBy: ['-price', 'price'], sortValue: (f) => f.price, cell: (f) => `$${f.price}` },
  { id: 'secret', header: 'Secret', card: 'hide', hiddenByDefault: true, cell: (f) => f.secret },
  actionsColumn('Actions', (f) => <button type="button">{`buy ${f.name}`}</button>),
]

const query = { isPending: false, isError: false, error: null, refetch: () => undefined }

/** A fruit list sorted by its headings, with column settings. */
function Fruits({ initialSort = 'name' }: { initialSort?: string }) {
  const [sort, setSort] = useState(initialSort)
  return (
    <DataTable
      name="fruit"
      columns={COLUMNS}
      query={query}
      rows={sortRows(FRUITS, COLUMNS, sort)}
      sort={{ value: sort, onChange: setSort }}
      settings
      emptyText="No fruit"
    />
  )
}

const names = () => screen.getAllByTestId(/^fruit-row-/).map((row) => row.dataset.testid)

describe('DataTable', () => {
  const original = window.matchMedia
  afterEach(() => {
    window.matchMedia = original
  })

  it('draws a phone card per row from the same columns: title first, labelled lines, hidden columns left off', () => {
    window.matchMedia = ((q: string) => ({
      matches: q.includes('max-width: 600px'),
      media: q,
      addEventListener: () => {},
      removeEventListener: () => {},
    })) as unknown as typeof window.matchMedia
    renderWithProviders(<Fruits />)
    const cards = screen.getByTestId('fruits-table')
    expect(cards.tagName).toBe('UL')
    expect(within(cards).queryByRole('columnheader')).toBeNull()
    const apple = screen.getByTestId('fruit-row-2')
    const lines = Array.from(apple.children) as HTMLElement[]
    expect(lines[0]).toHaveAttribute('data-card', 'title')
    expect(lines[0]).toHaveTextContent('apple')
    expect(within(apple).getByTestId('fruit-price')).toHaveAttribute('data-label', 'Price')
    expect(within(apple).getByTestId('fruit-price')).toHaveTextContent('$5')
    expect(apple.querySelector('[data-card="actions"]')).toHaveTextContent('buy apple')
    expect(apple).not.toHaveTextContent('s2')
  })

  it('is a table on wider screens, sorted by a click on a heading', async () => {
    renderWithProviders(<Fruits />)
    const table = screen.getByTestId('fruits-table')
    expect(table.tagName).toBe('TABLE')
    expect(names()).toEqual(['fruit-row-2', 'fruit-row-1', 'fruit-row-3'])
    expect(within(table).getByRole('columnheader', { name: 'Name' })).toHaveAttribute('aria-sort', 'ascending')
    const user = userEvent.setup()
    await user.click(within(table).getByRole('button', { name: 'Name' }))
    expect(names()).toEqual(['fruit-row-3', 'fruit-row-1', 'fruit-row-2'])
    expect(within(table).getByRole('columnheader', { name: 'Name' })).toHaveAttribute('aria-sort', 'descending')
    await user.click(within(table).getByRole('button', { name: 'Price' }))
    expect(names()).toEqual(['fruit-row-2', 'fruit-row-1', 'fruit-row-3'])
    expect(within(table).getByRole('columnheader', { name: 'Price' })).toHaveAttribute('aria-sort', 'descending')
    expect(within(table).getByRole('columnheader', { name: 'Name' })).toHaveAttribute('aria-sort', 'none')
  })

  it('hides and shows columns from its settings, remembered on this browser; the essential ones stay', async () => {
    const view = renderWithProviders(<Fruits />)
    const user = userEvent.setup()
    const heading = (name: string) => within(screen.getByTestId('fruits-table')).queryByRole('columnheader', { name })
    expect(heading('Secret')).toBeNull()
    await user.click(screen.getByTestId('fruit-columns'))
    await user.click(await screen.findByTestId('fruit-column-secret'))
    await user.click(screen.getByTestId('fruit-column-price'))
    expect(screen.getByTestId('fruit-column-name')).toHaveAttribute('data-disabled')
    await user.keyboard('{Escape}')
    expect(heading('Secret')).toBeInTheDocument()
    expect(heading('Price')).toBeNull()
    expect(JSON.parse(localStorage.getItem('columns.fruit') ?? '[]')).toEqual(['name', 'secret', 'actions'])
    view.unmount()

    renderWithProviders(<Fruits />)
    expect(heading('Price')).toBeNull()
    expect(heading('Secret')).toBeInTheDocument()
    await user.click(screen.getByTestId('fruit-columns'))
    await user.click(await screen.findByTestId('fruit-columns-reset'))
    expect(heading('Price')).toBeInTheDocument()
    expect(heading('Secret')).toBeNull()
    expect(localStorage.getItem('columns.fruit')).toBeNull()
  })

  it('shows the empty text, and a row of its own for a cell that spans columns', () => {
    const spanned: Column<Fruit>[] = [{ ...COLUMNS[0]!, span: (f) => (f.id === 1 ? 2 : undefined) }, COLUMNS[1]!]
    const table = (rows: Fruit[]) => <DataTable name="fruit" columns={spanned} query={query} rows={rows} emptyText="No fruit" />
    renderWithProviders(table(FRUITS))
    expect(within(screen.getByTestId('fruit-row-1')).getAllByRole('cell')).toHaveLength(1)
    expect(within(screen.getByTestId('fruit-row-2')).getAllByRole('cell')).toHaveLength(2)
    cleanup()
    renderWithProviders(table([]))
    expect(screen.getByTestId('fruits-empty')).toHaveTextContent('No fruit')
  })
})
