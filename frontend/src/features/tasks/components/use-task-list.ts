import { useState } from 'react'
import { useListScreen } from '@/hooks/use-list-screen'
import { useTasks } from '../api/get-tasks'
import type { TaskKind } from '../api/keys'
import type { Task, TaskPlatform } from '../types'

/** The filters of a task list as they live in the address bar; times in unix seconds. */
const TASK_FILTERS = { task_id: '', action: '', status: '', user_id: '', channel_id: '', start: 0, end: 0 }
/** The async tasks' list also picks a platform (Suno by default). */
const PLATFORM_FILTERS = { ...TASK_FILTERS, platform: 'suno' }
export type TaskFilterValues = typeof TASK_FILTERS & { platform?: string }

export const PLATFORMS: readonly TaskPlatform[] = ['suno', 'kling', 'midjourney']
export const isPlatform = (p: string): p is TaskPlatform => (PLATFORMS as readonly string[]).includes(p)

/** Filters and page (in the address bar), the query and the opened result of a task list screen. */
export function useTaskList(kind: TaskKind, admin: boolean) {
  const list = useListScreen<Task, TaskFilterValues>({ filters: kind === 'task' ? PLATFORM_FILTERS : TASK_FILTERS })
  const { start, end, platform = '', ...filters } = list.filters
  const [opened, setOpened] = useState<Task | null>(null)
  const tasks = useTasks(kind, admin ? 'all' : 'self', kind === 'task' ? (isPlatform(platform) ? platform : 'suno') : undefined, {
    ...filters,
    start_timestamp: start,
    end_timestamp: end,
    page: list.page,
    size: list.size,
  })
  return {
    list,
    platform: isPlatform(platform) ? platform : 'suno',
    tasks,
    opened,
    setOpened,
  }
}

export type TaskList = ReturnType<typeof useTaskList>
