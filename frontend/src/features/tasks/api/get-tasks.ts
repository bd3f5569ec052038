import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { Task, TaskPlatform } from '../types'
import { taskKeys, type TaskKind, type TaskListParams, type TaskScope } from './keys'

const text = (v: string) => v.trim() || undefined
const positive = (v: number) => (v > 0 ? v : undefined)

const PATHS: Record<TaskKind, string> = { mj: '/api/mj', task: '/api/task' }

export function getTasks(
  kind: TaskKind,
  scope: TaskScope,
  platform: TaskPlatform | undefined,
  params: TaskListParams,
  signal?: AbortSignal,
): Promise<Page<Task>> {
  const query = {
    page: params.page,
    size: params.size,
    // /api/mj is Midjourney only; /api/task takes the platform (Suno when left out).
    ...(kind === 'task' && platform ? { platform } : {}),
    task_id: text(params.task_id),
    action: text(params.action),
    status: text(params.status),
    start_timestamp: positive(params.start_timestamp),
    end_timestamp: positive(params.end_timestamp),
    // The self routes refuse the administrators' filters.
    ...(scope === 'all' ? { user_id: text(params.user_id), channel_id: text(params.channel_id) } : {}),
  }
  const path = scope === 'all' ? PATHS[kind] : `${PATHS[kind]}/self`
  return api.get<Page<Task>>(path, { query, signal })
}

export function getTasksQueryOptions(kind: TaskKind, scope: TaskScope, platform: TaskPlatform | undefined, params: TaskListParams) {
  return queryOptions({
    queryKey: taskKeys.list(kind, scope, platform, params),
    queryFn: ({ signal }) => getTasks(kind, scope, platform, params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/mj, /api/mj/self, /api/task or /api/task/self: filters and paging, newest first. */
export function useTasks(kind: TaskKind, scope: TaskScope, platform: TaskPlatform | undefined, params: TaskListParams) {
  return useQuery(getTasksQueryOptions(kind, scope, platform, params))
}
