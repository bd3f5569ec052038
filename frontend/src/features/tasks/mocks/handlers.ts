import { http, HttpResponse } from 'msw'
import type { Task } from '../types'

export function mockTask(overrides: Partial<Task> = {}): Task {
  return {
    id: 1,
    task_id: 'mj-1',
    platform: 'midjourney',
    action: 'IMAGINE',
    status: 'SUCCESS',
    progress: '100%',
    user_id: 1,
    token_id: 1,
    quota: 50_000,
    refunded: false,
    model: 'mj_imagine',
    mode: null,
    prompt: '一只猫',
    prompt_en: 'a cat',
    image_url: 'https://cdn.example.com/mj-1.png',
    fail_reason: '',
    submit_time: 1_735_689_600,
    start_time: 1_735_689_605,
    finish_time: 1_735_689_647,
    data: { id: 'mj-1', status: 'SUCCESS', imageUrl: 'https://cdn.example.com/mj-1.png' },
    channel_id: 4,
    ...overrides,
  }
}

/** A Kling video task as the server lists it: the finished video's address in `image_url`, Kling's task object in `data`. */
export function mockKlingTask(overrides: Partial<Task> = {}): Task {
  const taskId = overrides.task_id ?? 'kling-1'
  const url = 'https://cdn.klingai.example/videos/kling-1.mp4'
  return mockTask({
    id: 21,
    task_id: taskId,
    platform: 'kling',
    action: 'TEXT2VIDEO',
    status: 'SUCCESS',
    progress: '100%',
    quota: 250_000,
    model: 'kling-video_kling-v1_std_5',
    mode: 'std',
    prompt: '一只在草地上奔跑的猫',
    prompt_en: '',
    image_url: url,
    submit_time: 1_735_689_600,
    start_time: 1_735_689_602,
    finish_time: 1_735_689_720,
    data: {
      task_id: taskId,
      task_status: 'succeed',
      task_status_msg: '',
      created_at: 1_735_689_600_000,
      updated_at: 1_735_689_720_000,
      task_result: { videos: [{ id: 'video-1', url, duration: '5.1' }] },
    },
    channel_id: 12,
    ...overrides,
  })
}

const page = (url: URL, data: Task[]) =>
  HttpResponse.json({
    success: true,
    message: '',
    data: {
      data,
      page: Number(url.searchParams.get('page') ?? 1),
      size: Number(url.searchParams.get('size') ?? 10),
      total_count: data.length,
    },
  })

/** Default: no tasks. Tests install their own with server.use(...). */
export const taskHandlers = [
  http.get('*/api/mj/self', ({ request }) => page(new URL(request.url), [])),
  http.get('*/api/mj', ({ request }) => page(new URL(request.url), [])),
  http.get('*/api/task/self', ({ request }) => page(new URL(request.url), [])),
  http.get('*/api/task', ({ request }) => page(new URL(request.url), [])),
]

/** The tasks of the platform a list asks for: /api/mj lists Midjourney, /api/task its `platform` (Suno by default). */
const ofPlatform = (url: URL, tasks: Task[]) => {
  const platform = url.pathname.startsWith('/api/mj') ? 'midjourney' : (url.searchParams.get('platform') ?? 'suno')
  return page(url, tasks.filter((t) => t.platform === platform))
}

/**
 * Handlers answering every task list with those of `tasks` on the platform asked for (Kling rows
 * for `platform=kling`, ...); the user's own on /self, channel left out.
 */
export function taskListHandlers(tasks: Task[]) {
  const own = tasks.map(({ channel_id: _c, ...t }) => t)
  return [
    http.get('*/api/mj/self', ({ request }) => ofPlatform(new URL(request.url), own)),
    http.get('*/api/mj', ({ request }) => ofPlatform(new URL(request.url), tasks)),
    http.get('*/api/task/self', ({ request }) => ofPlatform(new URL(request.url), own)),
    http.get('*/api/task', ({ request }) => ofPlatform(new URL(request.url), tasks)),
  ]
}
