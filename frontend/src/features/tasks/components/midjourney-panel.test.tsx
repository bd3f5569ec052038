import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { formatTimestamp } from '@/lib/format'
import { openScreen, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockTask, taskListHandlers } from '../mocks/handlers'
import type { Task } from '../types'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const plainUser = { ...mockRoot, id: 2, username: 'alice', role: 1 }

const signIn = (user = mockRoot) => signInAs(user)

/** Records the query of every call to `path`. */
function watch(path: string) {
  const seen: Record<string, string>[] = []
  server.events.on('request:start', ({ request }) => {
    const url = new URL(request.url)
    if (url.pathname === path) seen.push(Object.fromEntries(url.searchParams))
  })
  return seen
}

const done = mockTask()
const failed = mockTask({
  id: 2,
  task_id: 'mj-2',
  action: 'UPSCALE',
  status: 'FAILURE',
  progress: '',
  image_url: '',
  prompt: 'a dog',
  prompt_en: '',
  fail_reason: 'banned prompt',
  start_time: 0,
  finish_time: 1_735_689_700,
  data: null,
  channel_id: 7,
  user_id: 3,
})
const running = mockTask({ id: 3, task_id: 'mj-3', status: 'IN_PROGRESS', progress: '45%', image_url: '', finish_time: 0 })

describe('midjourney screen', { timeout: 20_000 }, () => {
  it('lists every task for an administrator with progress, image, fail reason and time taken', async () => {
    signIn()
    server.use(...taskListHandlers([running, failed, done] as Task[]))
    const seen = watch('/api/mj')
    renderApp('/panel/midjourney')
    const table = await screen.findByTestId('mj-table')
    expect(within(table).getAllByTestId('task-id').map((n) => n.textContent)).toEqual(['mj-3', 'mj-2', 'mj-1'])

    const one = within(table).getByTestId('mj-row-1')
    expect(one).toHaveTextContent(formatTimestamp(1_735_689_600))
    expect(one).toHaveTextContent('IMAGINE')
    expect(one).toHaveTextContent('一只猫')
    expect(one).toHaveTextContent('a cat')
    expect(within(one).getByTestId('task-status')).toHaveTextContent('成功')
    expect(within(one).getByTestId('task-progress')).toHaveTextContent('100%')
    expect(within(one).getByTestId('task-duration')).toHaveTextContent('42 秒')
    const image = within(one).getByTestId('mj-image')
    expect(image).toHaveAttribute('href', '/mj/image/mj-1')
    expect(image).toHaveAttribute('target', '_blank')
    expect(within(image).getByRole('img')).toHaveAttribute('src', '/mj/image/mj-1')

    const two = within(table).getByTestId('mj-row-2')
    expect(two).toHaveTextContent('banned prompt')
    expect(two).toHaveTextContent('7') // channel
    expect(within(two).getByTestId('task-status')).toHaveTextContent('失败')
    expect(within(two).getByTestId('task-duration')).toHaveTextContent('100 秒')
    expect(within(two).queryByTestId('mj-image')).not.toBeInTheDocument()

    const three = within(table).getByTestId('mj-row-3')
    expect(within(three).getByTestId('task-status')).toHaveTextContent('执行中')
    expect(within(three).getByRole('progressbar')).toHaveAttribute('aria-valuenow', '45')
    expect(within(three).getByTestId('task-duration')).toHaveTextContent('-')

    expect(within(table).getByText('用户')).toBeInTheDocument()
    expect(within(table).getByText('渠道')).toBeInTheDocument()
    expect(seen[0]).toEqual({ page: '1', size: '10' })
    server.events.removeAllListeners()
  })

  it('sends the filters in the query', async () => {
    signIn()
    server.use(...taskListHandlers([done]))
    const seen = watch('/api/mj')
    renderApp('/panel/midjourney')
    await screen.findByTestId('mj-table')
    const user = userEvent.setup()
    await user.type(screen.getByTestId('task-filter-task_id'), ' mj-1 ')
    await user.type(screen.getByTestId('task-filter-channel_id'), '4')
    await user.type(screen.getByTestId('task-filter-user_id'), '1')
    await user.selectOptions(screen.getByTestId('task-filter-action'), 'UPSCALE')
    await user.selectOptions(screen.getByTestId('task-filter-status'), 'SUCCESS')
    await user.type(screen.getByTestId('task-filter-start'), '2025-01-01T08:00')
    await user.type(screen.getByTestId('task-filter-end'), '2025-01-02T08:00')
    await user.click(screen.getByTestId('task-search'))
    const start = String(new Date('2025-01-01T08:00').getTime() / 1000)
    const end = String(new Date('2025-01-02T08:00').getTime() / 1000)
    await waitFor(() =>
      expect(seen.at(-1)).toEqual({
        page: '1',
        size: '10',
        task_id: 'mj-1',
        action: 'UPSCALE',
        status: 'SUCCESS',
        start_timestamp: start,
        end_timestamp: end,
        user_id: '1',
        channel_id: '4',
      }),
    )
    server.events.removeAllListeners()
  })

  it('a user reads /api/mj/self without the administrators\' columns and filters', async () => {
    signIn(plainUser)
    server.use(...taskListHandlers([done]))
    const seen = watch('/api/mj/self')
    renderApp('/panel/midjourney')
    const table = await screen.findByTestId('mj-table')
    expect(within(table).getByTestId('mj-row-1')).toHaveTextContent('a cat')
    expect(within(table).queryByText('渠道')).not.toBeInTheDocument()
    expect(screen.queryByTestId('task-filter-user_id')).not.toBeInTheDocument()
    expect(screen.queryByTestId('task-filter-channel_id')).not.toBeInTheDocument()
    await userEvent.setup().click(screen.getByTestId('task-search'))
    expect(seen.length).toBeGreaterThan(0)
    server.events.removeAllListeners()
  })

  it('pages through the list', async () => {
    signIn()
    const all = Array.from({ length: 15 }, (_, i) => mockTask({ id: 100 - i, task_id: `mj-${100 - i}` }))
    server.use(
      http.get('*/api/mj', ({ request }) => {
        const q = new URL(request.url).searchParams
        const page = Number(q.get('page'))
        const size = Number(q.get('size'))
        return HttpResponse.json({
          success: true,
          message: '',
          data: { data: all.slice((page - 1) * size, page * size), page, size, total_count: all.length },
        })
      }),
    )
    renderApp('/panel/midjourney')
    const table = await screen.findByTestId('mj-table')
    expect(within(table).getAllByTestId('task-id')).toHaveLength(10)
    await userEvent.setup().click(screen.getByRole('button', { name: '下一页' }))
    await waitFor(() =>
      expect(within(screen.getByTestId('mj-table')).getAllByTestId('task-id').map((n) => n.textContent)).toEqual([
        'mj-90',
        'mj-89',
        'mj-88',
        'mj-87',
        'mj-86',
      ]),
    )
  })

  it('shows the empty state', async () => {
    signIn()
    renderApp('/panel/midjourney')
    expect(await screen.findByTestId('mj-empty')).toHaveTextContent('暂无 Midjourney 任务')
  })

  it('clicking the status shows the full result', async () => {
    signIn()
    server.use(...taskListHandlers([failed, done]))
    const { user } = openScreen('/panel/midjourney')
    await user.click(within(await screen.findByTestId('mj-row-1')).getByTestId('task-status'))
    const dialog = await screen.findByTestId('task-result-dialog')
    expect(dialog).toHaveTextContent('任务 mj-1 的上游返回结果。')
    expect(within(dialog).getByTestId('task-result-json').textContent).toBe(JSON.stringify(done.data, null, 2))
    await user.click(within(dialog).getByRole('button', { name: '关闭' }))
    await waitFor(() => expect(screen.queryByTestId('task-result-dialog')).not.toBeInTheDocument())

    await user.click(within(screen.getByTestId('mj-row-2')).getByTestId('task-status'))
    const second = await screen.findByTestId('task-result-dialog')
    expect(within(second).getByTestId('task-result-fail')).toHaveTextContent('banned prompt')
    expect(within(second).getByTestId('task-result-empty')).toHaveTextContent('暂无结果')
  })

  it('an error of the list goes to the central handler', async () => {
    signIn()
    server.use(
      http.get('*/api/mj', () => HttpResponse.json({ success: false, message: 'database is down' }, { status: 503 })),
    )
    renderApp('/panel/midjourney')
    expect(await screen.findByText('错误：database is down')).toBeInTheDocument()
  })
})
