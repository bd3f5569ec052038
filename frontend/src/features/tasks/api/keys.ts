import type { TaskPlatform } from '../types'

export interface TaskFilters {
  task_id: string
  /** Empty = any. */
  action: string
  /** Empty = any. */
  status: string
  /** Unix seconds of the submit time; 0 = no bound. */
  start_timestamp: number
  end_timestamp: number
  /** Administrators only (the self routes answer 403). */
  user_id: string
  channel_id: string
}

export interface TaskListParams extends TaskFilters {
  page: number
  size: number
}

/** `mj`: /api/mj[/self]; `task`: /api/task[/self] (with a platform, Suno by default). */
export type TaskKind = 'mj' | 'task'

/** `all`: the administrators' route; `self`: the user's own tasks. */
export type TaskScope = 'all' | 'self'

export const taskKeys = {
  all: ['tasks'] as const,
  lists: () => [...taskKeys.all, 'list'] as const,
  list: (kind: TaskKind, scope: TaskScope, platform: TaskPlatform | undefined, params: TaskListParams) =>
    [...taskKeys.lists(), kind, scope, platform ?? '', params] as const,
}
