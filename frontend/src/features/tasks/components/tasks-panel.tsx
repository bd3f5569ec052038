import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '@/components/data-table'
import { FilterSelect } from '@/components/filter-bar'
import { Badge } from '@/components/ui/badge'
import { isTranslatedAction, KLING_ACTIONS, MJ_ACTIONS, SUNO_ACTIONS, type Task, type TaskPlatform } from '../types'
import { TaskProgress, TaskStatusButton, taskColumns } from './task-bits'
import { TaskFilterForm } from './task-filters'
import { TaskResultDialog } from './task-result-dialog'
import { isPlatform, PLATFORMS, useTaskList } from './use-task-list'

/** The actions the action filter offers for each platform. */
const PLATFORM_ACTIONS: Record<TaskPlatform, readonly string[]> = {
  suno: SUNO_ACTIONS,
  kling: KLING_ACTIONS,
  midjourney: MJ_ACTIONS,
}

/**
 * Async tasks (Suno music and lyrics by default, Kling videos, Midjourney images): everyone's for
 * administrators, else the user's own.
 */
export function TasksPanel({ admin }: { admin: boolean }) {
  const { t } = useTranslation()
  const { list, platform, tasks, opened, setOpened } = useTaskList('task', admin)

  const actionLabel = (a: string) => (isTranslatedAction(a) ? t(`tasks:action.${a}`) : a || '-')
  const platformLabel = (p: string) => (isPlatform(p) ? t(`tasks:platform.${p}`) : p)

  const c = taskColumns(t, admin)
  const columns: Column<Task>[] = [
    c.submitTime,
    c.finishTime,
    c.taskId,
    { id: 'platform', header: t('tasks:columns.platform'), cell: (task) => <Badge variant="outline">{platformLabel(task.platform)}</Badge> },
    ...c.owners,
    { id: 'action', header: t('tasks:columns.action'), testId: 'task-action', cell: (task) => actionLabel(task.action) },
    { id: 'status', header: t('tasks:columns.status'), cell: (task) => <TaskStatusButton task={task} onOpen={() => setOpened(task)} /> },
    { id: 'progress', header: t('tasks:columns.progress'), cell: (task) => <TaskProgress progress={task.progress} /> },
    c.duration,
    c.failReason,
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <TaskFilterForm
        admin={admin}
        list={list}
        actions={PLATFORM_ACTIONS[platform].map((a) => ({ value: a, label: actionLabel(a) }))}
        extra={
          <FilterSelect
            label={t('tasks:filters.platform')}
            value={platform}
            // The action filter of the last platform means nothing on this one.
            onChange={(e) => isPlatform(e.target.value) && list.setFilters({ platform: e.target.value, action: '' })}
            data-testid="task-filter-platform"
          >
            {PLATFORMS.map((p) => (
              <option key={p} value={p}>
                {platformLabel(p)}
              </option>
            ))}
          </FilterSelect>
        }
      />

      <DataTable name="task" columns={columns} query={tasks} list={list} settings emptyText={t('tasks:task.empty')} />

      <TaskResultDialog task={opened} onOpenChange={(open) => !open && setOpened(null)} />
    </div>
  )
}
