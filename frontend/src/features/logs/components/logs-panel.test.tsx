import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { formatTimestamp } from '@/lib/format'
import { setUser } from '@/stores/session'
import { ok } from '@/test/helpers'
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

describe('logs screen: totals, address bar, columns, detail, errors, phones', () => {
  const metaOf = (extra: Record<string, unknown> = {}) => ({
    group_ratio: 1,
    input_ratio: 0.25,
    output_ratio: 1,
    price_type: 'tokens',
    usage: { prompt_tokens: 120, completion_tokens: 30, cached_read_tokens: 40 },
    usage_estimated: false,
    ...extra,
  })

  it('keeps the filters and the page in the address bar, so a reload shows the same logs', async () => {
    const seen: URLSearchParams[] = []
    serve('/api/log/self', Array.from({ length: 25 }, (_, i) => mockLog({ id: 200 - i })), seen)
    resetAuthMocks(plainUser)
    setUser(plainUser)
    // A reload of a filtered second page.
    renderApp('/panel/log?type=2&model_name=gpt-4o&page=2')
    await screen.findByTestId('logs-table')
    const q = seen.at(-1)!
    expect([q.get('type'), q.get('model_name'), q.get('page')]).toEqual(['2', 'gpt-4o', '2'])
    expect(screen.getByLabelText('模型名称')).toHaveValue('gpt-4o')
    expect(screen.getByLabelText('类型')).toHaveValue('2')

    // A new search writes the address bar and starts at page 1.
    const user = userEvent.setup()
    await user.type(screen.getByLabelText('分组'), 'vip')
    await user.click(screen.getByTestId('log-search'))
    await waitFor(() => expect(seen.at(-1)?.get('group')).toBe('vip'))
    const search = new URLSearchParams(screen.getByTestId('location').getAttribute('data-search') ?? '')
    expect(Object.fromEntries(search)).toEqual({ type: '2', model_name: 'gpt-4o', group: 'vip' })

    // Reset clears it.
    await user.click(screen.getByTestId('log-reset'))
    await waitFor(() => expect(screen.getByTestId('location').getAttribute('data-search')).toBe(''))
    expect(screen.getByLabelText('模型名称')).toHaveValue('')
  })

  it('shows the totals of the filter, costs to six significant digits', async () => {
    const stats: URLSearchParams[] = []
    server.use(
      http.get('*/api/log/self/stat', ({ request }) => {
        stats.push(new URL(request.url).searchParams)
        return HttpResponse.json({
          success: true,
          message: '',
          data: { quota: 61_728, prompt_tokens: 12_000, completion_tokens: 345, request_count: 7, rpm: 2, tpm: 150 },
        })
      }),
    )
    serve('/api/log/self', [mockLog({ id: 1, quota: 50 })], [])
    resetAuthMocks(plainUser)
    setUser(plainUser)
    renderApp('/panel/log?model_name=gpt')
    const totals = await screen.findByTestId('log-totals')
    await waitFor(() => expect(within(totals).getByTestId('log-total-quota')).toHaveTextContent('$0.123456'))
    expect(within(totals).getByTestId('log-total-requests')).toHaveTextContent('7')
    expect(within(totals).getByTestId('log-total-prompt')).toHaveTextContent('12.0k')
    expect(within(totals).getByTestId('log-total-rpm')).toHaveTextContent('2')
    expect(within(totals).getByTestId('log-total-tpm')).toHaveTextContent('150')
    expect(stats.at(-1)?.get('model_name')).toBe('gpt')
    // A call costing 50 units is $0.0001, not $0.00.
    expect(within(screen.getByTestId('log-row-1')).getByTestId('log-quota')).toHaveTextContent('$0.0001')
  })

  it('opens a log to read every field and how its cost was computed', async () => {
    serve(
      '/api/log/self',
      [mockLog({ id: 9, quota: 61, prompt_tokens: 120, completion_tokens: 30, is_stream: true, first_response_ms: 250, request_id: 'req-abc', metadata: metaOf({ uncapped_quota: 75 }) })],
      [],
    )
    resetAuthMocks(plainUser)
    setUser(plainUser)
    renderApp('/panel/log')
    const row = await screen.findByTestId('log-row-9')
    expect(row).toHaveTextContent('842 ms')
    expect(row).toHaveTextContent('首字 250 ms')
    await userEvent.setup().click(within(row).getByTestId('log-detail-open'))
    const sheet = await screen.findByTestId('log-detail')
    expect(within(sheet).getByTestId('log-detail-request-id')).toHaveTextContent('req-abc')
    expect(within(sheet).getByTestId('log-breakdown-input')).toHaveTextContent('输入 120 tokens × 倍率 0.25')
    expect(within(sheet).getByTestId('log-breakdown-input')).toHaveTextContent('$0.00006')
    expect(within(sheet).getByTestId('log-breakdown-output')).toHaveTextContent('$0.00006')
    expect(within(sheet).getByTestId('log-usage-cached_read_tokens')).toHaveTextContent('40')
    expect(within(sheet).getByTestId('log-uncapped')).toHaveTextContent('$0.00015')
    expect(within(sheet).getByTestId('log-detail-quota')).toHaveTextContent('$0.000122')
    expect(within(sheet).getByTestId('log-detail-quota')).toHaveTextContent('61 额度单位')
  })

  it('marks cache hits in the user\'s list and explains their cost in the detail', async () => {
    serve(
      '/api/log/self',
      [
        mockLog({
          id: 12,
          quota: 300,
          cache_hit: true,
          metadata: metaOf({
            usage: { prompt_tokens: 120, completion_tokens: 30, input_text_tokens: 100, input_image_tokens: 20, output_image_tokens: 30 },
            cache_full_quota: 1500,
            cache_saved_quota: 1200,
          }),
        }),
        mockLog({ id: 11, metadata: metaOf() }),
      ],
      [],
    )
    resetAuthMocks(plainUser)
    setUser(plainUser)
    renderApp('/panel/log')
    const hit = await screen.findByTestId('log-row-12')
    expect(within(hit).getByTestId('log-cache-hit')).toHaveTextContent('缓存命中')
    expect(within(screen.getByTestId('log-row-11')).queryByTestId('log-cache-hit')).not.toBeInTheDocument()

    await userEvent.setup().click(within(hit).getByTestId('log-detail-open'))
    const sheet = await screen.findByTestId('log-detail')
    expect(within(sheet).getByTestId('log-cache-hit')).toBeInTheDocument()
    expect(within(sheet).getByTestId('log-cache-hit-cost')).toHaveTextContent('缓存命中：原价 $0.003，节省 $0.0024')
    expect(within(sheet).getByTestId('log-detail-quota')).toHaveTextContent('$0.0006')
    expect(within(sheet).getByTestId('log-usage-input_text_tokens')).toHaveTextContent('输入文本 tokens100')
    expect(within(sheet).getByTestId('log-usage-input_image_tokens')).toHaveTextContent('输入图片 tokens20')
    expect(within(sheet).getByTestId('log-usage-output_image_tokens')).toHaveTextContent('输出图片 tokens30')
    expect(within(sheet).queryByTestId('log-usage-output_text_tokens')).not.toBeInTheDocument()
  })

  it('marks cache hits in the administrator\'s list too (no channel)', async () => {
    serve(
      '/api/log',
      [
        mockLog({ id: 21, quota: 0, cache_hit: true, channel_id: 0, channel_name: '', metadata: metaOf({ cache_full_quota: 500, cache_saved_quota: 500 }) }),
        mockLog({ id: 22, channel_id: 3, channel_name: 'openai-main' }),
      ],
      [],
    )
    resetAuthMocks(mockRoot)
    setUser(mockRoot)
    renderApp('/panel/log')
    const hit = await screen.findByTestId('log-row-21')
    expect(within(hit).getByTestId('log-cache-hit')).toHaveTextContent('缓存命中')
    expect(within(screen.getByTestId('log-row-22')).queryByTestId('log-cache-hit')).not.toBeInTheDocument()
    await userEvent.setup().click(within(hit).getByTestId('log-detail-open'))
    const sheet = await screen.findByTestId('log-detail')
    expect(within(sheet).getByTestId('log-cache-hit-cost')).toHaveTextContent('缓存命中：原价 $0.001，节省 $0.001')
  })

  it('shows failed calls as error logs with their status and reason', async () => {
    serve(
      '/api/log/self',
      [mockLog({ id: 3, type: 5, quota: 0, content: 'upstream said no', metadata: { status: 502, code: 'upstream_error' } })],
      [],
    )
    resetAuthMocks(plainUser)
    setUser(plainUser)
    renderApp('/panel/log?type=5')
    const row = await screen.findByTestId('log-row-3')
    expect(within(row).getByTestId('log-type')).toHaveTextContent('错误 502')
    expect(row).toHaveTextContent('upstream said no')
    await userEvent.setup().click(within(row).getByTestId('log-detail-open'))
    const sheet = await screen.findByTestId('log-detail')
    expect(within(sheet).getByTestId('log-detail-status')).toHaveTextContent('502')
    expect(within(sheet).getByTestId('log-detail-status')).toHaveTextContent('upstream_error')
    expect(within(sheet).getByTestId('log-detail-reason')).toHaveTextContent('upstream said no')
    expect(screen.getByLabelText('类型')).toHaveValue('5')
  })

  it('remembers which columns are shown; the essential ones stay', async () => {
    serve('/api/log/self', [mockLog({ id: 4 })], [])
    resetAuthMocks(plainUser)
    setUser(plainUser)
    const view = renderApp('/panel/log')
    const table = await screen.findByTestId('logs-table')
    expect(within(table).getByRole('columnheader', { name: '令牌' })).toBeInTheDocument()
    expect(within(table).queryByRole('columnheader', { name: '来源 IP' })).not.toBeInTheDocument()
    const user = userEvent.setup()
    await user.click(screen.getByTestId('log-columns'))
    await user.click(await screen.findByTestId('log-column-token'))
    await user.click(screen.getByTestId('log-column-ip'))
    expect(screen.getByTestId('log-column-model')).toHaveAttribute('data-disabled')
    await user.keyboard('{Escape}')
    await waitFor(() => expect(within(table).queryByRole('columnheader', { name: '令牌' })).not.toBeInTheDocument())
    expect(within(table).getByRole('columnheader', { name: '来源 IP' })).toBeInTheDocument()
    view.unmount()

    renderApp('/panel/log')
    const again = await screen.findByTestId('logs-table')
    expect(within(again).queryByRole('columnheader', { name: '令牌' })).not.toBeInTheDocument()
    await user.click(screen.getByTestId('log-columns'))
    await user.click(await screen.findByTestId('log-columns-reset'))
    await waitFor(() => expect(within(again).getByRole('columnheader', { name: '令牌' })).toBeInTheDocument())
  })

  it('says what went wrong when the logs cannot be read, and retries', async () => {
    let fail = true
    server.use(
      http.get('*/api/log/self', () =>
        fail
          ? HttpResponse.json({ success: false, message: 'database is down' }, { status: 503 })
          : ok({ data: [mockLog({ id: 8 })], page: 1, size: 10, total_count: 1 }),
      ),
    )
    resetAuthMocks(plainUser)
    setUser(plainUser)
    renderApp('/panel/log')
    const error = await screen.findByTestId('logs-empty-error')
    expect(error).toHaveTextContent('加载失败')
    expect(error).toHaveTextContent('database is down')
    expect(screen.queryByTestId('logs-empty')).not.toBeInTheDocument()
    fail = false
    await userEvent.setup().click(screen.getByTestId('logs-empty-retry'))
    expect(await screen.findByTestId('log-row-8')).toBeInTheDocument()
  })

  it('lists logs as cards on a phone, each opening its detail', async () => {
    const original = window.matchMedia
    window.matchMedia = ((query: string) => ({
      matches: query.includes('max-width: 600px'),
      media: query,
      addEventListener: () => {},
      removeEventListener: () => {},
    })) as unknown as typeof window.matchMedia
    try {
      serve('/api/log/self', [mockLog({ id: 6, quota: 50, metadata: metaOf() }), mockLog({ id: 7, cache_hit: true })], [])
      resetAuthMocks(plainUser)
      setUser(plainUser)
      renderApp('/panel/log')
      const card = await screen.findByTestId('log-card-6')
      expect(screen.queryByTestId('logs-table')).not.toBeInTheDocument()
      expect(card).toHaveTextContent('gpt-4o-mini')
      expect(within(card).getByTestId('log-quota')).toHaveTextContent('$0.0001')
      expect(within(card).queryByTestId('log-cache-hit')).not.toBeInTheDocument()
      expect(within(screen.getByTestId('log-card-7')).getByTestId('log-cache-hit')).toHaveTextContent('缓存命中')
      await userEvent.setup().click(within(card).getByRole('button'))
      expect(await screen.findByTestId('log-detail')).toBeInTheDocument()
    } finally {
      window.matchMedia = original
    }
  })
})
