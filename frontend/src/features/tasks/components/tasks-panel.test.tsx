import { cleanup, configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { formatTimestamp } from '@/lib/format'
import { openScreen, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockKlingTask, mockTask, taskListHandlers } from '../mocks/handlers'
import { httpUrl, klingVideoUrl, resultLinks } from '../types'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const plainUser = { ...mockRoot, id: 2, username: 'alice', role: 1 }

const signIn = (user = mockRoot) => signInAs(user)

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
    const { user } = openScreen('/panel/task')
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

const MP4 = 'https://cdn.klingai.example/videos/kling-1.mp4'
const video = mockKlingTask()
const fromImage = mockKlingTask({
  id: 22,
  task_id: 'kling-2',
  action: 'IMAGE2VIDEO',
  status: 'IN_PROGRESS',
  progress: '50%',
  image_url: '',
  finish_time: 0,
  data: { task_id: 'kling-2', task_status: 'processing', task_status_msg: '', created_at: 1, updated_at: 2 },
})
const failedVideo = mockKlingTask({
  id: 23,
  task_id: 'kling-3',
  status: 'FAILURE',
  progress: '100%',
  image_url: '',
  fail_reason: 'Failure to pass the risk control system',
  data: { task_id: 'kling-3', task_status: 'failed', task_status_msg: 'Failure to pass the risk control system' },
})

/** Opens the result dialog of the row `id` on the Kling platform. */
async function openKling(tasks: ReturnType<typeof mockKlingTask>[], id: number) {
  signIn()
  server.use(...taskListHandlers([music, ...tasks]))
  const { user } = openScreen('/panel/task')
  await screen.findByTestId('task-row-11')
  await user.selectOptions(screen.getByTestId('task-filter-platform'), 'kling')
  await user.click(within(await screen.findByTestId(`task-row-${id}`)).getByTestId('task-status'))
  return screen.findByTestId('task-result-dialog')
}

describe('Kling video tasks', { timeout: 20_000 }, () => {
  it('the platform filter offers Kling and asks for platform=kling; rows show the video actions', async () => {
    signIn()
    server.use(...taskListHandlers([music, video, fromImage]))
    const seen = watch('/api/task')
    renderApp('/panel/task')
    await screen.findByTestId('task-row-11')
    const platform = screen.getByTestId('task-filter-platform')
    expect(within(platform).getAllByRole('option').map((o) => [o.getAttribute('value'), o.textContent])).toEqual([
      ['suno', 'Suno'],
      ['kling', '可灵视频'],
      ['midjourney', 'Midjourney'],
    ])
    const user = userEvent.setup()
    // A Suno action filter is dropped with the platform.
    await user.selectOptions(screen.getByTestId('task-filter-action'), 'LYRICS')
    await user.click(screen.getByTestId('task-search'))
    await waitFor(() => expect(seen.at(-1)?.action).toBe('LYRICS'))
    await user.selectOptions(platform, 'kling')
    await waitFor(() => expect(seen.at(-1)).toEqual({ page: '1', size: '10', platform: 'kling' }))
    const table = await screen.findByTestId('tasks-table')
    await waitFor(() => expect(within(table).getAllByTestId('task-id').map((n) => n.textContent)).toEqual(['kling-1', 'kling-2']))
    const one = within(table).getByTestId('task-row-21')
    expect(one).toHaveTextContent('可灵视频')
    expect(within(one).getByTestId('task-action')).toHaveTextContent('文生视频')
    expect(within(one).getByTestId('task-status')).toHaveTextContent('成功')
    expect(within(one).getByTestId('task-duration')).toHaveTextContent('118 秒')
    const two = within(table).getByTestId('task-row-22')
    expect(within(two).getByTestId('task-action')).toHaveTextContent('图生视频')
    expect(within(two).getByTestId('task-progress')).toHaveTextContent('50%')
    // The action filter offers Kling's actions now.
    const action = screen.getByTestId('task-filter-action')
    expect(within(action).getAllByRole('option').map((o) => o.textContent)).toEqual(['全部', '文生视频', '图生视频'])
    await user.selectOptions(action, 'IMAGE2VIDEO')
    await user.click(screen.getByTestId('task-search'))
    await waitFor(() => expect(seen.at(-1)).toEqual({ page: '1', size: '10', platform: 'kling', action: 'IMAGE2VIDEO' }))
    server.events.removeAllListeners()
  })

  it('a finished video plays in the result dialog, with a link to open or download it', async () => {
    const dialog = await openKling([video], 21)
    const player = within(dialog).getByTestId('task-result-video')
    expect(player.tagName).toBe('VIDEO')
    expect(player).toHaveAttribute('src', MP4)
    expect(player).toHaveAttribute('controls')
    expect(player).toHaveAccessibleName('任务 kling-1 的视频')
    const link = within(dialog).getByTestId('task-result-video-link')
    expect(link).toHaveAttribute('href', MP4)
    expect(link).toHaveAttribute('target', '_blank')
    expect(link).toHaveAttribute('rel', 'noreferrer')
    expect(link).toHaveTextContent('打开或下载视频')
    expect(within(dialog).getByTestId('task-result-json')).toHaveTextContent('"task_status": "succeed"')
    expect(within(dialog).queryByTestId('task-result-fail')).toBeNull()
  })

  it('takes the video from the data without an image_url, and never uses an address that is not http(s)', async () => {
    const fromData = mockKlingTask({ image_url: '' })
    const dialog = await openKling([fromData], 21)
    expect(within(dialog).getByTestId('task-result-video')).toHaveAttribute('src', MP4)
    cleanup()

    const bad = mockKlingTask({
      image_url: 'javascript:alert(1)',
      data: { task_id: 'kling-1', task_status: 'succeed', task_result: { videos: [{ id: 'v', url: 'data:video/mp4;base64,AAAA', duration: '5' }] } },
    })
    const again = await openKling([bad], 21)
    expect(within(again).queryByTestId('task-result-video')).toBeNull()
    expect(again.querySelector('video')).toBeNull()
    expect(within(again).getByTestId('task-result-video-missing')).toHaveTextContent('任务已完成，但没有可播放的视频地址。')
    for (const node of again.querySelectorAll('[href],[src]')) {
      expect(node.getAttribute('href') ?? node.getAttribute('src')).not.toMatch(/^(javascript|data):/i)
    }
    cleanup()

    // A javascript: image_url with a good video in the data: the data's video.
    const mixed = mockKlingTask({ image_url: 'javascript:alert(1)' })
    const third = await openKling([mixed], 21)
    expect(within(third).getByTestId('task-result-video')).toHaveAttribute('src', MP4)
    expect(within(third).getByTestId('task-result-video-link')).toHaveAttribute('href', MP4)
  })

  it('a failed video shows its reason, an unfinished one says it is not ready', async () => {
    const dialog = await openKling([failedVideo], 23)
    expect(within(dialog).getByTestId('task-result-fail')).toHaveTextContent('失败原因: Failure to pass the risk control system')
    expect(dialog.querySelector('video')).toBeNull()
    expect(within(dialog).queryByTestId('task-result-video-missing')).toBeNull()
    cleanup()

    const running = await openKling([fromImage], 22)
    expect(within(running).getByTestId('task-result-video-pending')).toHaveTextContent('视频尚未生成完成（进度 50%）。')
    expect(running.querySelector('video')).toBeNull()
  })
})

describe('klingVideoUrl', () => {
  it('takes image_url, else the first video of the data, only over http(s)', () => {
    expect(klingVideoUrl({ image_url: MP4, data: null })).toBe(MP4)
    expect(klingVideoUrl({ image_url: '', data: { task_result: { videos: [{ url: 'http://x.example/v.mp4' }, { url: MP4 }] } } })).toBe(
      'http://x.example/v.mp4',
    )
    expect(klingVideoUrl({ image_url: ' javascript:alert(1)', data: { task_result: { videos: [{ url: '//evil.example/v.mp4' }] } } })).toBe(
      undefined,
    )
    expect(klingVideoUrl({ image_url: '', data: { task_result: { videos: 'nope' } } })).toBe(undefined)
    expect(klingVideoUrl({ image_url: '', data: 'text' })).toBe(undefined)
    expect(httpUrl('HTTPS://cdn.example/v.mp4')).toBe('https://cdn.example/v.mp4')
    expect(httpUrl('ftp://cdn.example/v.mp4')).toBe(undefined)
    expect(httpUrl('https://')).toBe(undefined)
    expect(httpUrl(42)).toBe(undefined)
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
