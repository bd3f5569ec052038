import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { ok, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockPeriod } from '../mocks/handlers'
import { fromDateInput, lastDays, toDateInput } from '../period'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

const signIn = () => signInAs(mockRoot)

describe('analytics period', () => {
  it('converts dates to UTC days', () => {
    expect(fromDateInput('2025-01-01')).toBe(1_735_689_600)
    expect(toDateInput(1_735_689_600 + 3600)).toBe('2025-01-01')
    expect(lastDays(7, 1_735_689_600_000 + 1000)).toEqual({ start: '2024-12-26', end: '2025-01-01' })
  })
})

describe('analytics screen', () => {
  it('shows totals, charts and users; a new period asks again; the CSV link follows', async () => {
    const seen: string[] = []
    server.use(
      http.get('*/api/analytics/statistics', ({ request }) => {
        const q = new URL(request.url).searchParams
        seen.push(`${q.get('start_timestamp')}-${q.get('end_timestamp')}`)
        return HttpResponse.json({
          success: true,
          message: '',
          data: { quota: 2_500_000, request_count: 321, prompt_tokens: 40_000, completion_tokens: 9_000, users: 3, channels: 2, total_users: 12, total_channels: 4, enabled_channels: 3, start_day: 0, end_day: 0, days: 7 },
        })
      }),
    )
    signIn()
    renderApp('/panel/analytics')
    await waitFor(() => expect(screen.getByTestId('analytics-quota')).toHaveTextContent('$5.00'))
    expect(screen.getByTestId('analytics-requests')).toHaveTextContent('321')
    expect(screen.getByTestId('analytics-active-users')).toHaveTextContent('3 / 12')
    expect(screen.getByTestId('analytics-channels')).toHaveTextContent('3 / 4')
    expect(await screen.findByTestId('analytics-by-model')).toHaveTextContent('gpt-4o')
    expect(within(screen.getByTestId('analytics-by-day')).getAllByTestId('analytics-by-day-bar')).toHaveLength(7)
    expect(await screen.findByTestId('analytics-user-2')).toHaveTextContent('alice')

    const user = userEvent.setup()
    const start = screen.getByLabelText('开始日期')
    const end = screen.getByLabelText('结束日期')
    await user.clear(start)
    await user.type(start, '2024-01-01')
    await user.clear(end)
    await user.type(end, '2025-06-01')
    await user.click(screen.getByTestId('analytics-apply'))
    expect(await screen.findByText('时间跨度最多 366 天')).toBeInTheDocument()

    await user.clear(end)
    await user.type(end, '2023-12-01')
    await user.click(screen.getByTestId('analytics-apply'))
    expect(await screen.findByText('结束日期不能早于开始日期')).toBeInTheDocument()

    await user.clear(end)
    await user.type(end, '2024-01-31')
    await user.click(screen.getByTestId('analytics-apply'))
    await waitFor(() => expect(seen).toContain(`${1_704_067_200}-${1_706_659_200}`))
    expect(screen.getByTestId('analytics-export')).toHaveAttribute(
      'href',
      '/api/analytics/export.csv?start_timestamp=1704067200&end_timestamp=1706659200',
    )
  })

  it('shows the empty state without traffic', async () => {
    server.use(
      http.get('*/api/analytics/period', () =>
        ok(mockPeriod({ by_model: [], series: [] })),
      ),
      http.get('*/api/analytics/users', () =>
        ok({ ...mockPeriod(), data: [], page: 1, size: 10, total_count: 0 }),
      ),
    )
    signIn()
    renderApp('/panel/analytics')
    expect(await screen.findByTestId('analytics-empty')).toHaveTextContent('这段时间没有数据')
    expect(await screen.findByTestId('analytics-users-empty')).toBeInTheDocument()
  })

  it('ordinary users are told they lack the permission, and no data is asked for', async () => {
    const plain = { ...mockRoot, id: 2, role: 1 }
    resetAuthMocks(plain)
    setUser(plain)
    renderApp('/panel/analytics')
    expect(await screen.findByTestId('no-permission')).toHaveTextContent('无权访问')
    expect(screen.getByTestId('location')).toHaveTextContent('/panel/analytics')
    expect(screen.queryByTestId('analytics-empty')).not.toBeInTheDocument()
  })
})
