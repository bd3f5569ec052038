import { useState } from 'react'
import { useTasks } from '../api/get-tasks'
import type { TaskKind, TaskListParams } from '../api/keys'
import type { Task, TaskPlatform } from '../types'
import { EMPTY_TASK_DRAFT, toTaskFilters, type TaskFilterDraft } from './task-filters'

/** Filter draft, applied filters, paging and the opened result of a task list screen. */
export function useTaskList(kind: TaskKind, admin: boolean, platform?: TaskPlatform) {
  const [draft, setDraft] = useState<TaskFilterDraft>(EMPTY_TASK_DRAFT)
  const [params, setParams] = useState<TaskListParams>({ ...toTaskFilters(EMPTY_TASK_DRAFT), page: 1, size: 10 })
  const [opened, setOpened] = useState<Task | null>(null)
  const tasks = useTasks(kind, admin ? 'all' : 'self', platform, params)
  return {
    draft,
    setDraft,
    params,
    tasks,
    rows: tasks.data?.data ?? [],
    total: tasks.data?.total_count ?? 0,
    opened,
    setOpened,
    search: () => setParams((p) => ({ ...p, ...toTaskFilters(draft), page: 1 })),
    reset: () => {
      setDraft(EMPTY_TASK_DRAFT)
      setParams((p) => ({ ...p, ...toTaskFilters(EMPTY_TASK_DRAFT), page: 1 }))
    },
    setPage: (page: number) => setParams((p) => ({ ...p, page })),
    setSize: (size: number) => setParams((p) => ({ ...p, size, page: 1 })),
    /** Back to page 1 without an action filter (the platform changed: its actions are others). */
    clearAction: () => {
      setDraft((d) => ({ ...d, action: '' }))
      setParams((p) => ({ ...p, action: '', page: 1 }))
    },
  }
}
