/** Platforms of the async tasks (docs/tasks.md). */
export type TaskPlatform = 'midjourney' | 'suno' | 'kling'

/** Suno's actions (translated as `tasks:action.*`). */
export const SUNO_ACTIONS = ['MUSIC', 'LYRICS'] as const
/** Kling video's actions (translated as `tasks:action.*`). */
export const KLING_ACTIONS = ['TEXT2VIDEO', 'IMAGE2VIDEO'] as const
/** Midjourney's actions (shown as they are). */
export const MJ_ACTIONS = [
  'IMAGINE',
  'UPSCALE',
  'VARIATION',
  'REROLL',
  'BLEND',
  'DESCRIBE',
  'SHORTEN',
  'ZOOM',
  'PAN',
  'MODAL',
  'INPAINT',
  'HIGH_VARIATION',
  'LOW_VARIATION',
  'CUSTOM_ZOOM',
] as const

/** The actions with a translated label. */
export type TranslatedAction = (typeof SUNO_ACTIONS)[number] | (typeof KLING_ACTIONS)[number]
const TRANSLATED_ACTIONS: readonly string[] = [...SUNO_ACTIONS, ...KLING_ACTIONS]
export const isTranslatedAction = (a: string): a is TranslatedAction => TRANSLATED_ACTIONS.includes(a)

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

/** `value` if it is an absolute http(s) URL, else undefined (never a javascript:, data: or relative address). */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value.trim())) return undefined
  try {
    const url = new URL(value.trim())
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined
  } catch {
    return undefined
  }
}

/**
 * The video of a Kling task: its `image_url` (where the server keeps the first video's address),
 * else the first video of `data.task_result.videos`; only http(s) addresses count.
 */
export function klingVideoUrl(task: Pick<Task, 'image_url' | 'data'>): string | undefined {
  const fromUrl = httpUrl(task.image_url)
  if (fromUrl) return fromUrl
  const data = task.data
  if (!data || typeof data !== 'object') return undefined
  const result = (data as { task_result?: unknown }).task_result
  if (!result || typeof result !== 'object') return undefined
  const videos = (result as { videos?: unknown }).videos
  if (!Array.isArray(videos) || videos.length === 0) return undefined
  const first: unknown = videos[0]
  return first && typeof first === 'object' ? httpUrl((first as { url?: unknown }).url) : undefined
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
