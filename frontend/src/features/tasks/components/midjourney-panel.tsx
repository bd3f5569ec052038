import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '@/components/data-table'
import { MJ_ACTIONS, type Task } from '../types'
import { TaskProgress, TaskStatusButton, taskColumns } from './task-bits'
import { TaskFilterForm } from './task-filters'
import { TaskResultDialog } from './task-result-dialog'
import { useTaskList } from './use-task-list'

/** The image of a task through the gateway's proxy (the upstream's URL may not be reachable). */
export const mjImageUrl = (taskId: string) => `/mj/image/${encodeURIComponent(taskId)}`

/** Midjourney tasks: everyone's for administrators (GET /api/mj), else the user's own (/api/mj/self). */
export function MidjourneyPanel({ admin }: { admin: boolean }) {
  const { t } = useTranslation()
  const { list, tasks, opened, setOpened } = useTaskList('mj', admin)

  const c = taskColumns(t, admin)
  const columns: Column<Task>[] = [
    c.submitTime,
    c.taskId,
    ...c.owners,
    { id: 'action', header: t('tasks:columns.action'), cell: (task) => task.action || '-' },
    // Status with its progress, and the prompt with its English form: one column each, so the
    // table keeps its image and duration in view at 1440 px.
    {
      id: 'status',
      header: t('tasks:columns.status'),
      cell: (task) => (
        <div className="grid justify-items-start gap-1">
          <TaskStatusButton task={task} onOpen={() => setOpened(task)} />
          <TaskProgress progress={task.progress} />
        </div>
      ),
    },
    {
      id: 'image',
      header: t('tasks:columns.image'),
      cell: (task) =>
        task.image_url ? (
          <a href={mjImageUrl(task.task_id)} target="_blank" rel="noreferrer" title={t('tasks:openImage')} data-testid="mj-image">
            <img
              src={mjImageUrl(task.task_id)}
              alt={t('tasks:imageOf', { id: task.task_id })}
              loading="lazy"
              className="size-14 rounded-md border object-cover"
            />
          </a>
        ) : (
          '-'
        ),
    },
    {
      id: 'prompt',
      header: t('tasks:columns.prompt'),
      cellClassName: 'max-w-72 min-w-40 text-xs break-words',
      cell: (task) => (
        <div>
          <span className="line-clamp-3" title={task.prompt}>
            {task.prompt || '-'}
          </span>
          {task.prompt_en && task.prompt_en !== task.prompt && (
            <span className="mt-1 line-clamp-2 text-muted-foreground" title={task.prompt_en} data-testid="mj-prompt-en">
              {t('tasks:columns.promptEn')}: {task.prompt_en}
            </span>
          )}
        </div>
      ),
    },
    c.failReason,
    c.duration,
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <TaskFilterForm admin={admin} list={list} actions={MJ_ACTIONS.map((a) => ({ value: a, label: a }))} />

      <DataTable
        name="mj"
        testId="mj-table"
        emptyTestId="mj-empty"
        columns={columns}
        query={tasks}
        list={list}
        settings
        emptyText={t('tasks:mj.empty')}
      />

      <TaskResultDialog task={opened} onOpenChange={(open) => !open && setOpened(null)} />
    </div>
  )
}
