import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { formatTimestamp } from '@/lib/format'
import { setUser } from '@/stores/session'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import type { LogEntry } from '@/types/api'
import { mockLog } from '../mocks/handlers'

const plainUser = { ...mockRoot, id: 2, username: 'alice', role: 1 }

function serve(path: string, logs: LogEntry[], seen: URLSearchParams[]) {
  server.use(
    http.get(`*${path}`, ({ request }) => {
      const q = new URL(request.url).searchParams
      seen.push(q)
      const page = Number(q.get('page'))
      const size = Number(q.get('size'))
      return HttpResponse.json({
        success: true,
        message: '',
        data: { data: logs.slice((page - 1) * size, page * size), page, size, total_count: logs.length },
      })
    }),
  )
}

describe('logs screen', () => {
  it("a user reads /api/log/self with filters and paging; columns are formatted", async () => {
    const seen: URLSearchParams[] = []
    const logs = Array.from({ length: 15 }, (_, i) => mockLog({ id: 100 - i }))
    logs[0] = mockLog({ id: 100, type: 1, quota: 1_000_000, model_name: '', content: 'recharged by code', use_time_ms: 0 })
    serve('/api/log/self', logs, seen)
    resetAuthMocks(plainUser)
    setUser(plainUser)
    renderApp('/panel/log')

    const table = await screen.findByTestId('logs-table')
    const recharge = within(table).getByTestId('log-row-100')
    expect(within(recharge).getByTestId('log-type')).toHaveTextContent('充值')
    expect(recharge).toHaveTextContent('recharged by code')
    const consume = within(table).getByTestId('log-row-99')
    expect(within(consume).getByTestId('log-type')).toHaveTextContent('消费')
    expect(consume).toHaveTextContent(formatTimestamp(1_735_689_600))
    expect(consume).toHaveTextContent('gpt-4o-mini')
    expect(consume).toHaveTextContent('default')
    expect(consume).toHaveTextContent('842')
    await waitFor(() => expect(within(recharge).getByTestId('log-quota')).toHaveTextContent('$2.00'))
    // Users see neither the user nor the channel column, nor the admin filters.
    expect(within(table).queryByText('渠道')).not.toBeInTheDocument()
    expect(screen.queryByLabelText('用户名')).not.toBeInTheDocument()
    expect(screen.queryByLabelText('渠道 ID')).not.toBeInTheDocument()
    expect(seen[0]?.get('page')).toBe('1')
    expect(seen[0]?.get('size')).toBe('10')
    expect(seen[0]?.has('type')).toBe(false)

    const user = userEvent.setup()
    await user.click(screen.getByRole('button', { name: '下一页' }))
    await waitFor(() => expect(within(screen.getByTestId('logs-table')).getAllByRole('row')).toHaveLength(6))
    expect(seen.at(-1)?.get('page')).toBe('2')

    await user.selectOptions(screen.getByLabelText('类型'), '消费')
    await user.type(screen.getByLabelText('模型名称'), 'gpt-4o')
    await user.type(screen.getByLabelText('令牌名称'), 'default')
    await user.type(screen.getByLabelText('起始时间'), '2025-01-01T00:00')
    await user.click(screen.getByTestId('log-search'))
    await waitFor(() => expect(seen.at(-1)?.get('type')).toBe('2'))
    const q = seen.at(-1)!
    expect(q.get('page')).toBe('1')
    expect(q.get('model_name')).toBe('gpt-4o')
    expect(q.get('token_name')).toBe('default')
    expect(q.get('start_timestamp')).toBe(String(new Date('2025-01-01T00:00').getTime() / 1000))
    expect(q.has('end_timestamp')).toBe(false)
  })

  it('an administrator reads /api/log and has the username and channel filters', async () => {
    const seen: URLSearchParams[] = []
    serve('/api/log', [mockLog({ id: 5, username: 'bob', channel_id: 3, channel_name: 'openai-main' })], seen)
    resetAuthMocks(mockRoot)
    setUser(mockRoot)
    renderApp('/panel/log')
    const row = await screen.findByTestId('log-row-5')
    expect(row).toHaveTextContent('bob')
    expect(row).toHaveTextContent('3 openai-main')

    const user = userEvent.setup()
    await user.type(screen.getByLabelText('用户名'), 'bob')
    await user.type(screen.getByLabelText('渠道 ID'), '3')
    await user.click(screen.getByTestId('log-search'))
    await waitFor(() => expect(seen.at(-1)?.get('username')).toBe('bob'))
    expect(seen.at(-1)?.get('channel')).toBe('3')
  })

  it('shows the empty state', async () => {
    resetAuthMocks(plainUser)
    setUser(plainUser)
    renderApp('/panel/log')
    expect(await screen.findByTestId('logs-empty')).toHaveTextContent('暂无日志')
  })
})
