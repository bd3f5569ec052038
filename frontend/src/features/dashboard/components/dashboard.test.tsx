import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { usageLevel, usagePercent } from '@/lib/format'
import { ok, openScreen, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { cacheHitRate, formatCacheHitRate } from '../cache-hit-rate'
import { mockDashboard, PLAYGROUND_KEY } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

const signIn = (user = mockRoot) => signInAs(user)

describe('usage colour', () => {
  it('is green under 60 %, orange under 85 %, red otherwise', () => {
    expect(usagePercent(0, 0)).toBe(0)
    expect(usagePercent(25, 75)).toBe(25)
    expect(usageLevel(59.9)).toBe('green')
    expect(usageLevel(60)).toBe('orange')
    expect(usageLevel(84.9)).toBe('orange')
    expect(usageLevel(85)).toBe('red')
  })
})

describe('cache hit rate', () => {
  it('is the share of the requests answered from the cache, and no rate without requests', () => {
    expect(cacheHitRate({ request_count: 17, cache_hits: 2 })).toBeCloseTo(11.76, 2)
    expect(cacheHitRate({ request_count: 4, cache_hits: 4 })).toBe(100)
    expect(cacheHitRate({ request_count: 4, cache_hits: 0 })).toBe(0)
    expect(cacheHitRate({ request_count: 0, cache_hits: 0 })).toBeNull()
    expect(formatCacheHitRate(cacheHitRate({ request_count: 17, cache_hits: 2 }))).toBe('11.8%')
    expect(formatCacheHitRate(0)).toBe('0.0%')
    expect(formatCacheHitRate(null)).toBe('—')
  })
})

describe('dashboard screen', () => {
  it('shows balance, usage share and the per-day and per-model usage', async () => {
    const seen: string[] = []
    server.use(
      http.get('*/api/user/dashboard', ({ request }) => {
        seen.push(new URL(request.url).searchParams.get('days') ?? '')
        return ok(mockDashboard())
      }),
    )
    signIn({ ...mockRoot, quota: 100_000, used_quota: 300_000, request_count: 42 })
    renderApp('/panel/dashboard')

    const byModel = await screen.findByTestId('usage-by-model')
    const rows = within(byModel).getAllByTestId('usage-by-model-row')
    expect(rows[0]).toHaveTextContent('claude-3-5-haiku')
    expect(rows[1]).toHaveTextContent('gpt-4o-mini')
    expect(within(screen.getByTestId('usage-by-day')).getAllByTestId('usage-by-day-bar')).toHaveLength(7)
    await waitFor(() => expect(screen.getByTestId('dashboard-quota')).toHaveTextContent('$0.20'))
    expect(screen.getByTestId('dashboard-used-quota')).toHaveTextContent('$0.60')
    expect(screen.getByTestId('dashboard-request-count')).toHaveTextContent('42')
    expect(screen.getByTestId('stat-period-quota')).toHaveTextContent('$3.50')
    expect(screen.getByTestId('usage-percent')).toHaveTextContent('75.0%')
    expect(screen.getByTestId('usage-bar')).toHaveAttribute('data-level', 'orange')
    expect(rows[0]).toHaveTextContent('$2.00')
    expect(screen.getByTestId('stat-cache-hit')).toHaveTextContent('缓存命中率')
    expect(screen.getByTestId('stat-cache-hit-rate')).toHaveTextContent('11.8%')
    expect(screen.getByTestId('stat-cache-hit-hint')).toHaveTextContent('17 次请求中有 2 次由缓存应答')

    const user = userEvent.setup()
    await user.selectOptions(screen.getByTestId('dashboard-days'), '30')
    await waitFor(() => expect(seen).toEqual(['7', '30']))
  })

  it('shows the empty state without usage', async () => {
    server.use(
      http.get('*/api/user/dashboard', () =>
        ok(mockDashboard({ series: [], by_model: [] })),
      ),
    )
    signIn()
    renderApp('/panel/dashboard')
    expect(await screen.findByTestId('dashboard-empty')).toHaveTextContent('这段时间还没有使用记录')
  })

  it('shows a dash for the cache hit rate of a period without requests, 0 % without hits', async () => {
    const zero = { request_count: 0, quota: 0, prompt_tokens: 0, completion_tokens: 0, cache_hits: 0 }
    let totals = zero
    server.use(
      http.get('*/api/user/dashboard', () =>
        ok(mockDashboard({ series: [], by_model: [], totals })),
      ),
    )
    signIn()
    const view = renderApp('/panel/dashboard')
    expect(await screen.findByTestId('stat-cache-hit-rate')).toHaveTextContent('—')
    expect(screen.getByTestId('stat-cache-hit-hint')).toHaveTextContent('这段时间没有请求')
    view.unmount()

    totals = { ...zero, request_count: 3, quota: 900 }
    renderApp('/panel/dashboard')
    await waitFor(() => expect(screen.getByTestId('stat-cache-hit-rate')).toHaveTextContent('0.0%'))
    expect(screen.getByTestId('stat-cache-hit-hint')).toHaveTextContent('3 次请求中有 0 次由缓存应答')
  })

  it('quick start creates the playground key and shows how to call the API', async () => {
    let calls = 0
    server.use(
      http.post('*/api/token/playground', () => {
        calls++
        return ok({ id: 3, key: PLAYGROUND_KEY, created: true })
      }),
    )
    signIn()
    const { user } = openScreen('/panel/dashboard')
    await user.click(await screen.findByTestId('quick-start-create'))
    expect(await screen.findByTestId('quick-start-key')).toHaveValue(PLAYGROUND_KEY)
    expect(calls).toBe(1)
    expect(screen.getByTestId('quick-start-curl')).toHaveTextContent(`Authorization: Bearer ${PLAYGROUND_KEY}`)
    expect(screen.getByTestId('quick-start-curl')).toHaveTextContent('/v1/chat/completions')
    await user.click(screen.getByTestId('quick-start-key-copy'))
    expect(await navigator.clipboard.readText()).toBe(PLAYGROUND_KEY)
  })

  it('a failed playground call goes through the central error handler', async () => {
    server.use(
      http.post('*/api/token/playground', () =>
        HttpResponse.json({ success: false, message: 'quota exhausted', code: 'x' }, { status: 403 }),
      ),
    )
    signIn()
    const { user } = openScreen('/panel/dashboard')
    await user.click(await screen.findByTestId('quick-start-create'))
    expect(await screen.findByText('错误：quota exhausted')).toBeInTheDocument()
    expect(screen.queryByTestId('quick-start-key')).not.toBeInTheDocument()
  })

  it('the status tab shows the site status', async () => {
    signIn()
    const { user } = openScreen('/panel/dashboard')
    await user.click(await screen.findByTestId('tab-status'))
    expect(await screen.findByTestId('site-status')).toBeInTheDocument()
    await waitFor(() => expect(screen.getByTestId('status-name')).toHaveTextContent('Switchboard Test'))
    expect(screen.getByTestId('status-version')).toHaveTextContent('v0.17')
  })
})
