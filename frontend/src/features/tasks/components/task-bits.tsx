import { useTranslation } from 'react-i18next'
import type { Column } from '@/components/data-table'
import { Badge, type BadgeVariant } from '@/components/ui/badge'
import { formatTimestamp } from '@/lib/format'
import { progressPercent, TASK_STATUSES, taskDuration, type Task } from '../types'

const VARIANTS: Record<string, BadgeVariant> = {
  NOT_START: 'outline',
  SUBMITTED: 'secondary',
  QUEUED: 'secondary',
  IN_PROGRESS: 'warning',
  MODAL: 'warning',
  SUCCESS: 'success',
  FAILURE: 'destructive',
}

/** The status badge; clicking it opens the task's result. */
export function TaskStatusButton({ task, onOpen }: { task: Task; onOpen: () => void }) {
  const { t } = useTranslation()
  const known = (TASK_STATUSES as readonly string[]).includes(task.status)
  const label = known ? t(`tasks:status.${task.status as (typeof TASK_STATUSES)[number]}`) : task.status || t('tasks:status.unknown')
  return (
    <button
      type="button"
      onClick={onOpen}
      title={t('tasks:result.open')}
      aria-label={t('tasks:result.openFor', { status: label })}
      className="rounded-md focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none"
      data-testid="task-status"
    >
      <Badge variant={VARIANTS[task.status] ?? 'outline'} className="cursor-pointer">
        {label}
      </Badge>
    </button>
  )
}

/** A thin bar with the percentage next to it. */
export function TaskProgress({ progress }: { progress: string }) {
  const value = progressPercent(progress)
  return (
    <div className="flex min-w-28 items-center gap-2" data-testid="task-progress">
      <div
        className="h-1.5 flex-1 overflow-hidden rounded-full bg-muted"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={value}
      >
        <div className={value >= 100 ? 'h-full bg-emerald-500' : 'h-full bg-primary'} style={{ width: `${value}%` }} />
      </div>
      <span className="w-10 text-right text-xs tabular-nums">{Math.round(value)}%</span>
    </div>
  )
}

export function TaskTime({ value }: { value: number }) {
  return <span className="whitespace-nowrap">{value ? formatTimestamp(value) : '-'}</span>
}

/** Time taken in seconds, or "-" while unfinished. */
export function TaskDuration({ task }: { task: Task }) {
  const { t } = useTranslation()
  const seconds = taskDuration(task)
  return <span data-testid="task-duration">{seconds === undefined ? '-' : t('tasks:seconds', { value: seconds })}</span>
}

type ColumnKey = 'submitTime' | 'finishTime' | 'taskId' | 'user' | 'channel' | 'failReason' | 'duration'

/** The columns both task lists show; the user and channel ones for administrators only. */
export function taskColumns(t: (key: `tasks:columns.${ColumnKey}`) => string, admin: boolean) {
  const submitTime: Column<Task> = { id: 'submitTime', header: t('tasks:columns.submitTime'), cell: (task) => <TaskTime value={task.submit_time} /> }
  const finishTime: Column<Task> = { id: 'finishTime', header: t('tasks:columns.finishTime'), cell: (task) => <TaskTime value={task.finish_time} /> }
  const taskId: Column<Task> = {
    id: 'taskId',
    header: t('tasks:columns.taskId'),
    card: 'title',
    essential: true,
    className: 'font-mono text-xs',
    testId: 'task-id',
    cell: (task) => task.task_id,
  }
  const owners: Column<Task>[] = admin
    ? [
        { id: 'user', header: t('tasks:columns.user'), cellClassName: 'tabular-nums', cell: (task) => task.user_id },
        { id: 'channel', header: t('tasks:columns.channel'), cellClassName: 'tabular-nums', cell: (task) => task.channel_id ?? '-' },
      ]
    : []
  const failReason: Column<Task> = {
    id: 'failReason',
    header: t('tasks:columns.failReason'),
    cellClassName: 'max-w-48 text-xs break-words text-destructive',
    cell: (task) => task.fail_reason || '-',
  }
  const duration: Column<Task> = {
    id: 'duration',
    header: t('tasks:columns.duration'),
    right: true,
    className: 'whitespace-nowrap',
    cellClassName: 'tabular-nums',
    cell: (task) => <TaskDuration task={task} />,
  }
  return { submitTime, finishTime, taskId, owners, failReason, duration }
}
