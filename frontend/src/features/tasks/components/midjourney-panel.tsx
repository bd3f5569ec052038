import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ListState } from '@/components/list-kit'
import { Card, CardContent } from '@/components/ui/card'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { MJ_ACTIONS } from '../types'
import { TaskDuration, TaskProgress, TaskStatusButton, TaskTime } from './task-bits'
import { TaskFilterForm } from './task-filters'
import { TaskResultDialog } from './task-result-dialog'
import { useTaskList } from './use-task-list'

/** The image of a task through the gateway's proxy (the upstream's URL may not be reachable). */
export const mjImageUrl = (taskId: string) => `/mj/image/${encodeURIComponent(taskId)}`

/** Midjourney tasks: everyone's for administrators (GET /api/mj), else the user's own (/api/mj/self). */
export function MidjourneyPanel({ admin }: { admin: boolean }) {
  const { t } = useTranslation()
  const list = useTaskList('mj', admin)
  const { rows, total } = list

  return (
    <div className="grid grid-cols-1 gap-4">
      <TaskFilterForm
        admin={admin}
        draft={list.draft}
        onChange={list.setDraft}
        onSearch={list.search}
        onReset={list.reset}
        actions={MJ_ACTIONS.map((a) => ({ value: a, label: a }))}
      />

      <Card>
        <CardContent className="p-0">
          <ListState loading={list.tasks.isPending} query={list.tasks} empty={rows.length === 0} emptyText={t('tasks:mj.empty')} emptyTestId="mj-empty">
            <Table cards data-testid="mj-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('tasks:columns.submitTime')}</TableHead>
                  <TableHead>{t('tasks:columns.taskId')}</TableHead>
                  {admin && <TableHead>{t('tasks:columns.user')}</TableHead>}
                  {admin && <TableHead>{t('tasks:columns.channel')}</TableHead>}
                  <TableHead>{t('tasks:columns.action')}</TableHead>
                  <TableHead>{t('tasks:columns.status')}</TableHead>
                  <TableHead>{t('tasks:columns.image')}</TableHead>
                  <TableHead>{t('tasks:columns.prompt')}</TableHead>
                  <TableHead>{t('tasks:columns.failReason')}</TableHead>
                  <TableHead className="text-right">{t('tasks:columns.duration')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((task) => (
                  <TableRow key={task.id} data-testid={`mj-row-${task.id}`}>
                    <TableCell>
                      <TaskTime value={task.submit_time} />
                    </TableCell>
                    <TableCell data-card="title" className="font-mono text-xs" data-testid="task-id">
                      {task.task_id}
                    </TableCell>
                    {admin && <TableCell className="tabular-nums">{task.user_id}</TableCell>}
                    {admin && <TableCell className="tabular-nums">{task.channel_id ?? '-'}</TableCell>}
                    <TableCell>{task.action || '-'}</TableCell>
                    {/* Status with its progress, and the prompt with its English form: one column each,
                        so the table keeps its image and duration in view at 1440 px. */}
                    <TableCell>
                      <div className="grid justify-items-start gap-1">
                        <TaskStatusButton task={task} onOpen={() => list.setOpened(task)} />
                        <TaskProgress progress={task.progress} />
                      </div>
                    </TableCell>
                    <TableCell>
                      {task.image_url ? (
                        <a
                          href={mjImageUrl(task.task_id)}
                          target="_blank"
                          rel="noreferrer"
                          title={t('tasks:openImage')}
                          data-testid="mj-image"
                        >
                          <img
                            src={mjImageUrl(task.task_id)}
                            alt={t('tasks:imageOf', { id: task.task_id })}
                            loading="lazy"
                            className="size-14 rounded-md border object-cover"
                          />
                        </a>
                      ) : (
                        '-'
                      )}
                    </TableCell>
                    <TableCell className="max-w-72 min-w-40 text-xs break-words">
                      <span className="line-clamp-3" title={task.prompt}>
                        {task.prompt || '-'}
                      </span>
                      {task.prompt_en && task.prompt_en !== task.prompt && (
                        <span className="mt-1 line-clamp-2 text-muted-foreground" title={task.prompt_en} data-testid="mj-prompt-en">
                          {t('tasks:columns.promptEn')}: {task.prompt_en}
                        </span>
                      )}
                    </TableCell>
                    <TableCell className="max-w-48 text-xs break-words text-destructive">{task.fail_reason || '-'}</TableCell>
                    <TableCell className="text-right whitespace-nowrap tabular-nums">
                      <TaskDuration task={task} />
                    </TableCell>
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
