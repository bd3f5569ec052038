/** Platforms of the async tasks (docs/tasks.md). */
export type TaskPlatform = 'midjourney' | 'suno'

/**
 * One async task as GET /api/mj, /api/mj/self, /api/task and /api/task/self list it.
 * Times are unix seconds (0 = not yet); `channel_id` is sent to administrators only.
 */
export interface Task {
  id: number
  task_id: string
  platform: TaskPlatform | string
  action: string
  status: string
  /** Text such as "45%". */
  progress: string
  user_id: number
  token_id: number
  quota: number
  refunded: boolean
  model: string | null
  mode: string | null
  prompt: string
  prompt_en: string
  image_url: string
  fail_reason: string
  submit_time: number
  start_time: number
  finish_time: number
  /** The upstream's last answer about the task. */
  data: unknown
  channel_id?: number
}

/** Statuses the poller records (unfinished ones first). */
export const TASK_STATUSES = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'MODAL', 'SUCCESS', 'FAILURE'] as const

/** Progress text ("45%", "45", "") as a number 0-100. */
export function progressPercent(progress: string): number {
  const n = Number.parseFloat(progress)
  if (!Number.isFinite(n)) return 0
  return Math.min(100, Math.max(0, n))
}

/** Seconds from the start (or, without one, the submit) to the finish; undefined while unfinished. */
export function taskDuration(task: Pick<Task, 'submit_time' | 'start_time' | 'finish_time'>): number | undefined {
  const from = task.start_time || task.submit_time
  if (!task.finish_time || !from || task.finish_time < from) return undefined
  return task.finish_time - from
}

/** Every `*_url` string (http or https) inside a task's data, e.g. a Suno clip's audio_url and image_url. */
export function resultLinks(data: unknown): { key: string; url: string }[] {
  const links: { key: string; url: string }[] = []
  const seen = new Set<string>()
  const walk = (value: unknown, key: string): void => {
    if (typeof value === 'string') {
      if (/_url$/i.test(key) && /^https?:\/\//i.test(value) && !seen.has(value)) {
        seen.add(value)
        links.push({ key, url: value })
      }
    } else if (Array.isArray(value)) {
      value.forEach((v) => walk(v, key))
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k)
    }
  }
  walk(data, '')
  return links
}
