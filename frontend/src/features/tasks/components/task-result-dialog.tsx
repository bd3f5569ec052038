import { useTranslation } from 'react-i18next'
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { resultLinks, type Task } from '../types'

export interface TaskResultDialogProps {
  task: Task | null
  onOpenChange: (open: boolean) => void
}

/** The upstream's answer about a task, pretty-printed, with the media links it holds. */
export function TaskResultDialog({ task, onOpenChange }: TaskResultDialogProps) {
  const { t } = useTranslation()
  const data = task?.data ?? null
  const links = task ? resultLinks(data) : []
  return (
    <Dialog open={task !== null} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-3xl" data-testid="task-result-dialog">
        <DialogHeader>
          <DialogTitle>{t('tasks:result.title')}</DialogTitle>
          <DialogDescription>{t('tasks:result.description', { id: task?.task_id ?? '' })}</DialogDescription>
        </DialogHeader>
        {task?.fail_reason && (
          <p className="text-sm text-destructive" data-testid="task-result-fail">
            {t('tasks:columns.failReason')}: {task.fail_reason}
          </p>
        )}
        {links.length > 0 && (
          <div className="grid gap-1" data-testid="task-result-links">
            <p className="text-sm font-medium">{t('tasks:result.links')}</p>
            <ul className="grid gap-1 text-sm">
              {links.map((l) => (
                <li key={l.url} className="break-all">
                  <span className="text-muted-foreground">{l.key}: </span>
                  <a href={l.url} target="_blank" rel="noreferrer" className="text-primary underline-offset-2 hover:underline">
                    {l.url}
                  </a>
                </li>
              ))}
            </ul>
          </div>
        )}
        {data === null ? (
          <p className="text-sm text-muted-foreground" data-testid="task-result-empty">
            {t('tasks:result.empty')}
          </p>
        ) : (
          <pre className="max-h-[50dvh] overflow-auto rounded-md bg-muted p-3 text-xs" data-testid="task-result-json">
            {JSON.stringify(data, null, 2)}
          </pre>
        )}
      </DialogContent>
    </Dialog>
  )
}
