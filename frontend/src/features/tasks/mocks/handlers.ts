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

/** Handlers answering every task list with `tasks` (the user's own on /self: channel left out). */
export function taskListHandlers(tasks: Task[]) {
  const own = tasks.map(({ channel_id: _c, ...t }) => t)
  return [
    http.get('*/api/mj/self', ({ request }) => page(new URL(request.url), own)),
    http.get('*/api/mj', ({ request }) => page(new URL(request.url), tasks)),
    http.get('*/api/task/self', ({ request }) => page(new URL(request.url), own)),
    http.get('*/api/task', ({ request }) => page(new URL(request.url), tasks)),
  ]
}
