import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ListState } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Card, CardContent } from '@/components/ui/card'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { isTranslatedAction, KLING_ACTIONS, MJ_ACTIONS, SUNO_ACTIONS, type TaskPlatform } from '../types'
import { TaskDuration, TaskProgress, TaskStatusButton, TaskTime } from './task-bits'
import { TaskFilterForm } from './task-filters'
import { TaskResultDialog } from './task-result-dialog'
import { useTaskList } from './use-task-list'

const PLATFORMS: readonly TaskPlatform[] = ['suno', 'kling', 'midjourney']
/** The actions the action filter offers for each platform. */
const PLATFORM_ACTIONS: Record<TaskPlatform, readonly string[]> = {
  suno: SUNO_ACTIONS,
  kling: KLING_ACTIONS,
  midjourney: MJ_ACTIONS,
}
const isPlatform = (p: string): p is TaskPlatform => (PLATFORMS as readonly string[]).includes(p)

/**
 * Async tasks (Suno music and lyrics by default, Kling videos, Midjourney images): everyone's for
 * administrators, else the user's own.
 */
export function TasksPanel({ admin }: { admin: boolean }) {
  const { t } = useTranslation()
  const id = useId()
  const [platform, setPlatform] = useState<TaskPlatform>('suno')
  const list = useTaskList('task', admin, platform)
  const { rows, total } = list

  const actionLabel = (a: string) => (isTranslatedAction(a) ? t(`tasks:action.${a}`) : a || '-')
  const platformLabel = (p: string) => (isPlatform(p) ? t(`tasks:platform.${p}`) : p)

  return (
    <div className="grid grid-cols-1 gap-4">
      <TaskFilterForm
        admin={admin}
        draft={list.draft}
        onChange={list.setDraft}
        onSearch={list.search}
        onReset={list.reset}
        actions={PLATFORM_ACTIONS[platform].map((a) => ({ value: a, label: actionLabel(a) }))}
        extra={
          <div className="grid gap-1.5">
            <Label htmlFor={`${id}-platform`}>{t('tasks:filters.platform')}</Label>
            <NativeSelect
              id={`${id}-platform`}
              value={platform}
              onChange={(e) => {
                if (!isPlatform(e.target.value)) return
                setPlatform(e.target.value)
                // The action filter of the last platform means nothing on this one.
                list.clearAction()
              }}
              data-testid="task-filter-platform"
            >
              {PLATFORMS.map((p) => (
                <option key={p} value={p}>
                  {platformLabel(p)}
                </option>
              ))}
            </NativeSelect>
          </div>
        }
      />

      <Card>
        <CardContent className="p-0">
          <ListState loading={list.tasks.isPending} query={list.tasks} empty={rows.length === 0} emptyText={t('tasks:task.empty')} emptyTestId="tasks-empty">
            <Table cards data-testid="tasks-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('tasks:columns.submitTime')}</TableHead>
                  <TableHead>{t('tasks:columns.finishTime')}</TableHead>
                  <TableHead>{t('tasks:columns.taskId')}</TableHead>
                  <TableHead>{t('tasks:columns.platform')}</TableHead>
                  {admin && <TableHead>{t('tasks:columns.user')}</TableHead>}
                  {admin && <TableHead>{t('tasks:columns.channel')}</TableHead>}
                  <TableHead>{t('tasks:columns.action')}</TableHead>
                  <TableHead>{t('tasks:columns.status')}</TableHead>
                  <TableHead>{t('tasks:columns.progress')}</TableHead>
                  <TableHead className="text-right">{t('tasks:columns.duration')}</TableHead>
                  <TableHead>{t('tasks:columns.failReason')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((task) => (
                  <TableRow key={task.id} data-testid={`task-row-${task.id}`}>
                    <TableCell>
                      <TaskTime value={task.submit_time} />
                    </TableCell>
                    <TableCell>
                      <TaskTime value={task.finish_time} />
                    </TableCell>
                    <TableCell data-card="title" className="font-mono text-xs" data-testid="task-id">
                      {task.task_id}
                    </TableCell>
                    <TableCell>
                      <Badge variant="outline">{platformLabel(task.platform)}</Badge>
                    </TableCell>
                    {admin && <TableCell className="tabular-nums">{task.user_id}</TableCell>}
                    {admin && <TableCell className="tabular-nums">{task.channel_id ?? '-'}</TableCell>}
                    <TableCell data-testid="task-action">{actionLabel(task.action)}</TableCell>
                    <TableCell>
                      <TaskStatusButton task={task} onOpen={() => list.setOpened(task)} />
                    </TableCell>
                    <TableCell>
                      <TaskProgress progress={task.progress} />
                    </TableCell>
                    <TableCell className="text-right whitespace-nowrap tabular-nums">
                      <TaskDuration task={task} />
                    </TableCell>
                    <TableCell className="max-w-48 text-xs break-words text-destructive">{task.fail_reason || '-'}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>

      {total > 0 && (
        <DataPagination page={list.params.page} size={list.params.size} total={total} onPageChange={list.setPage} onSizeChange={list.setSize} />
      )}

      <TaskResultDialog task={list.opened} onOpenChange={(open) => !open && list.setOpened(null)} />
    </div>
  )
}
