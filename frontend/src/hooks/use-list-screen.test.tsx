import { screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { renderWithProviders } from '@/test/render'
import { pageOf, useListScreen } from './use-list-screen'

const FILTERS = { keyword: '', status: 0 }

/** A list screen's state as text and buttons: what useListScreen holds, and its actions. */
function Probe({ shown = 1 }: { shown?: number }) {
  const list = useListScreen<string, typeof FILTERS>({ filters: FILTERS, prefix: 'x_' })
  return (
    <div>
      <output data-testid="state">{JSON.stringify({ ...list.params, filtered: list.filtered })}</output>
      <form onSubmit={list.search}>
        <input aria-label="keyword" {...list.bind('keyword')} />
        <button type="submit">search</button>
      </form>
      <button type="button" onClick={() => list.setFilters({ status: 2 })}>status</button>
      <button type="button" onClick={() => list.pagination(100).onPageChange(3)}>page 3</button>
      <button type="button" onClick={() => list.deleted(1, shown)}>deleted</button>
      <button type="button" onClick={list.reset}>reset</button>
    </div>
  )
}

const state = () => JSON.parse(screen.getByTestId('state').textContent ?? '{}') as Record<string, unknown>
const search = () => new URLSearchParams(screen.getByTestId('location').getAttribute('data-search') ?? '')

describe('useListScreen', () => {
  it('reads the filters and the page from the address bar, and writes what differs from the defaults', async () => {
    renderWithProviders(<Probe />, '/list?x_keyword=apple&x_page=2&x_size=20&other=kept')
    expect(state()).toEqual({ keyword: 'apple', status: 0, page: 2, size: 20, filtered: true })
    expect(screen.getByLabelText('keyword')).toHaveValue('apple')

    // Typing changes only the form; a search sends it, trimmed, from page 1.
    const user = userEvent.setup()
    await user.clear(screen.getByLabelText('keyword'))
    await user.type(screen.getByLabelText('keyword'), ' pear ')
    expect(state()).toMatchObject({ keyword: 'apple', page: 2 })
    await user.click(screen.getByRole('button', { name: 'search' }))
    expect(Object.fromEntries(search())).toEqual({ x_keyword: 'pear', x_size: '20', other: 'kept' })
    expect(state()).toMatchObject({ keyword: 'pear', page: 1 })

    // A select applies at once, keeping what else the form holds.
    await user.type(screen.getByLabelText('keyword'), 's')
    await user.click(screen.getByRole('button', { name: 'status' }))
    expect(Object.fromEntries(search())).toEqual({ x_keyword: 'pear', x_status: '2', x_size: '20', other: 'kept' })
    expect(screen.getByLabelText('keyword')).toHaveValue('pears')

    await user.click(screen.getByRole('button', { name: 'reset' }))
    expect(Object.fromEntries(search())).toEqual({ x_size: '20', other: 'kept' })
    expect(state()).toMatchObject({ keyword: '', status: 0, filtered: false })
  })

  it('ignores what it cannot read: a bad page, a size it does not offer', () => {
    renderWithProviders(<Probe />, '/list?x_page=zero&x_size=7&x_status=-1')
    expect(state()).toEqual({ keyword: '', status: 0, page: 1, size: 10, filtered: false })
  })

  it('goes back a page after deleting the last row of a page, not before', async () => {
    const view = renderWithProviders(<Probe shown={2} />, '/list?x_page=3')
    const user = userEvent.setup()
    await user.click(screen.getByRole('button', { name: 'deleted' }))
    expect(state()).toMatchObject({ page: 3 })
    view.unmount()

    renderWithProviders(<Probe shown={1} />, '/list')
    await user.click(screen.getByRole('button', { name: 'page 3' }))
    expect(search().get('x_page')).toBe('3')
    await user.click(screen.getByRole('button', { name: 'deleted' }))
    expect(search().get('x_page')).toBe('2')
    expect(state()).toMatchObject({ page: 2 })
  })

  it('pages a list the server answers whole, keeping the page within its pages', () => {
    const all = Array.from({ length: 25 }, (_, i) => i)
    expect(pageOf(all, 2, 10)).toEqual({ rows: all.slice(10, 20), page: 2 })
    expect(pageOf(all, 9, 10)).toEqual({ rows: all.slice(20), page: 3 })
    expect(pageOf([], 4, 10)).toEqual({ rows: [], page: 1 })
  })
})
