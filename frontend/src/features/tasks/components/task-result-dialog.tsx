import { DownloadIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { klingVideoUrl, progressPercent, resultLinks, type Task } from '../types'

export interface TaskResultDialogProps {
  task: Task | null
  onOpenChange: (open: boolean) => void
}

/**
 * A Kling task's video: a player and a link once it succeeded with an http(s) address, else what
 * is missing (a failure's reason is shown by the dialog).
 */
function KlingVideo({ task }: { task: Task }) {
  const { t } = useTranslation()
  if (task.status === 'FAILURE') {
    // The dialog shows the reason; say at least that it failed when there is none.
    return task.fail_reason ? null : (
      <p className="text-sm text-destructive" data-testid="task-result-video-failed">
        {t('tasks:video.failed')}
      </p>
    )
  }
  const url = klingVideoUrl(task)
  if (task.status !== 'SUCCESS') {
    return (
      <p className="text-sm text-muted-foreground" data-testid="task-result-video-pending">
        {t('tasks:video.pending', { progress: Math.round(progressPercent(task.progress)) })}
      </p>
    )
  }
  if (!url) {
    return (
      <p className="text-sm text-muted-foreground" data-testid="task-result-video-missing">
        {t('tasks:video.missing')}
      </p>
    )
  }
  return (
    <div className="grid gap-2" data-testid="task-result-video-block">
      <video
        controls
        playsInline
        preload="metadata"
        src={url}
        aria-label={t('tasks:video.player', { id: task.task_id })}
        className="max-h-[50dvh] w-full rounded-md bg-black"
        data-testid="task-result-video"
      >
        {t('tasks:video.unsupported')}
      </video>
      <a
        href={url}
        target="_blank"
        rel="noreferrer"
        download
        className="inline-flex items-center gap-1.5 text-sm text-primary underline-offset-2 hover:underline [&_svg]:size-4"
        data-testid="task-result-video-link"
      >
        <DownloadIcon />
        {t('tasks:video.open')}
      </a>
    </div>
  )
}

/** The upstream's answer about a task, pretty-printed, with the media links it holds (a Kling task's video playable). */
export function TaskResultDialog({ task, onOpenChange }: TaskResultDialogProps) {
  const { t } = useTranslation()
  const data = task?.data ?? null
  const links = task ? resultLinks(data) : []
  const kling = task?.platform === 'kling'
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
        {task && kling && <KlingVideo task={task} />}
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
          // A Kling task has already said what is missing.
          !kling && (
            <p className="text-sm text-muted-foreground" data-testid="task-result-empty">
              {t('tasks:result.empty')}
            </p>
          )
        ) : (
          <pre className="max-h-[50dvh] overflow-auto rounded-md bg-muted p-3 text-xs" data-testid="task-result-json">
            {JSON.stringify(data, null, 2)}
          </pre>
        )}
      </DialogContent>
    </Dialog>
  )
}
