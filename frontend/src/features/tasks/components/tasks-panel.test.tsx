import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { formatTimestamp } from '@/lib/format'
import { setUser } from '@/stores/session'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockTask, taskListHandlers } from '../mocks/handlers'
import { resultLinks } from '../types'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const plainUser = { ...mockRoot, id: 2, username: 'alice', role: 1 }

function signIn(user = mockRoot) {
  resetAuthMocks(user)
  setUser(user)
}

function watch(path: string) {
  const seen: Record<string, string>[] = []
  server.events.on('request:start', ({ request }) => {
    const url = new URL(request.url)
    if (url.pathname === path) seen.push(Object.fromEntries(url.searchParams))
  })
  return seen
}

const clips = [
  {
    id: 'clip-1',
    title: 'Song',
    audio_url: 'https://cdn.suno.example/clip-1.mp3',
    image_url: 'https://cdn.suno.example/clip-1.jpg',
    metadata: { prompt: 'la la' },
  },
]
const music = mockTask({
  id: 11,
  task_id: 'suno-1',
  platform: 'suno',
  action: 'MUSIC',
  status: 'SUCCESS',
  progress: '100%',
  prompt: '',
  prompt_en: '',
  image_url: '',
  submit_time: 1_735_689_600,
  start_time: 1_735_689_610,
  finish_time: 1_735_689_700,
  data: clips,
  channel_id: 9,
})
const lyrics = mockTask({
  id: 12,
  task_id: 'suno-2',
  platform: 'suno',
  action: 'LYRICS',
  status: 'FAILURE',
  progress: '',
  image_url: '',
  fail_reason: 'upstream refused',
  finish_time: 0,
  data: null,
})

describe('async tasks screen', { timeout: 20_000 }, () => {
  it('lists Suno tasks with platform, action, status, progress, times and fail reason', async () => {
    signIn()
    server.use(...taskListHandlers([lyrics, music]))
    const seen = watch('/api/task')
    renderApp('/panel/task')
    const table = await screen.findByTestId('tasks-table')
    expect(within(table).getAllByTestId('task-id').map((n) => n.textContent)).toEqual(['suno-2', 'suno-1'])
    const one = within(table).getByTestId('task-row-11')
    expect(one).toHaveTextContent('Suno')
    expect(within(one).getByTestId('task-action')).toHaveTextContent('音乐')
    expect(within(one).getByTestId('task-status')).toHaveTextContent('成功')
    expect(within(one).getByTestId('task-progress')).toHaveTextContent('100%')
    expect(one).toHaveTextContent(formatTimestamp(1_735_689_600))
    expect(one).toHaveTextContent(formatTimestamp(1_735_689_700))
    expect(within(one).getByTestId('task-duration')).toHaveTextContent('90 秒')
    const two = within(table).getByTestId('task-row-12')
    expect(within(two).getByTestId('task-action')).toHaveTextContent('歌词')
    expect(within(two).getByTestId('task-status')).toHaveTextContent('失败')
    expect(two).toHaveTextContent('upstream refused')
    expect(seen[0]).toEqual({ page: '1', size: '10', platform: 'suno' })
    server.events.removeAllListeners()
  })

  it('sends the filters and the platform in the query', async () => {
    signIn()
    server.use(...taskListHandlers([music]))
    const seen = watch('/api/task')
    renderApp('/panel/task')
    await screen.findByTestId('tasks-table')
    const user = userEvent.setup()
    await user.type(screen.getByTestId('task-filter-task_id'), 'suno-1')
    await user.selectOptions(screen.getByTestId('task-filter-action'), 'LYRICS')
    await user.selectOptions(screen.getByTestId('task-filter-status'), 'FAILURE')
    await user.type(screen.getByTestId('task-filter-user_id'), '5')
    await user.type(screen.getByTestId('task-filter-channel_id'), '9')
    await user.click(screen.getByTestId('task-search'))
    await waitFor(() =>
      expect(seen.at(-1)).toEqual({
        page: '1',
        size: '10',
        platform: 'suno',
        task_id: 'suno-1',
        action: 'LYRICS',
        status: 'FAILURE',
        user_id: '5',
        channel_id: '9',
      }),
    )
    await user.selectOptions(screen.getByTestId('task-filter-platform'), 'midjourney')
    await waitFor(() => expect(seen.at(-1)?.platform).toBe('midjourney'))
    server.events.removeAllListeners()
  })

  it('a user reads /api/task/self without the administrators\' filters', async () => {
    signIn(plainUser)
    server.use(...taskListHandlers([music]))
    const seen = watch('/api/task/self')
    renderApp('/panel/task')
    await screen.findByTestId('task-row-11')
    expect(screen.queryByTestId('task-filter-user_id')).not.toBeInTheDocument()
    expect(seen[0]).toEqual({ page: '1', size: '10', platform: 'suno' })
    server.events.removeAllListeners()
  })

  it('shows the empty state', async () => {
    signIn()
    renderApp('/panel/task')
    expect(await screen.findByTestId('tasks-empty')).toHaveTextContent('暂无异步任务')
  })

  it('clicking the status shows the result data with its audio and image links', async () => {
    signIn()
    server.use(...taskListHandlers([music]))
    renderApp('/panel/task')
    const user = userEvent.setup()
    await user.click(within(await screen.findByTestId('task-row-11')).getByTestId('task-status'))
    const dialog = await screen.findByTestId('task-result-dialog')
    expect(within(dialog).getByTestId('task-result-json').textContent).toBe(JSON.stringify(clips, null, 2))
    const links = within(within(dialog).getByTestId('task-result-links')).getAllByRole('link')
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      'https://cdn.suno.example/clip-1.mp3',
      'https://cdn.suno.example/clip-1.jpg',
    ])
    expect(links[0]).toHaveAttribute('target', '_blank')
  })
})

describe('resultLinks', () => {
  it('collects http(s) *_url strings once, anywhere in the data', () => {
    expect(
      resultLinks({
        a: [{ audio_url: 'https://x/1.mp3', video_url: 'javascript:alert(1)' }, { audio_url: 'https://x/1.mp3' }],
        nested: { image_large_url: 'http://x/2.png', title: 'https://x/not-a-url-key' },
      }),
    ).toEqual([
      { key: 'audio_url', url: 'https://x/1.mp3' },
      { key: 'image_large_url', url: 'http://x/2.png' },
    ])
    expect(resultLinks(null)).toEqual([])
  })
})
