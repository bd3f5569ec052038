import { PencilIcon, PlusIcon, PowerIcon, PowerOffIcon, RotateCwIcon, Trash2Icon, TriangleAlertIcon } from 'lucide-react'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Spinner } from '@/components/ui/spinner'
import { errorText } from '@/lib/errors'
import { notify } from '@/lib/toast'
import { cn } from '@/lib/utils'

/** An icon button of a table row, labelled for screen readers and with a tooltip. */
export function RowAction({
  label,
  testId,
  className,
  children,
  ...props
}: {
  label: string
  testId: string
  className?: string
  onClick: () => void
  disabled?: boolean
  children: ReactNode
}) {
  return (
    <Button
      type="button"
      variant="ghost"
      size="icon"
      className={cn('size-8', className)}
      aria-label={label}
      title={label}
      data-testid={testId}
      {...props}
    >
      {children}
    </Button>
  )
}

/** A list's "new …" button. */
export function CreateButton({ label, onClick, testId, className }: { label: string; onClick: () => void; testId: string; className?: string }) {
  return (
    <Button type="button" onClick={onClick} className={className} data-testid={testId}>
      <PlusIcon />
      {label}
    </Button>
  )
}

/** A row's title cell: its name (with a test id) over a smaller line (a key, a code, a symbol). */
export function TitleCell({
  text,
  testId,
  sub,
  subClassName = 'font-mono text-xs text-muted-foreground',
  subTitle,
}: {
  text: ReactNode
  testId: string
  sub?: ReactNode
  subClassName?: string
  /** The smaller line's tooltip (when it is cut short). */
  subTitle?: string
}) {
  return (
    <>
      <div className="font-medium" data-testid={testId}>
        {text}
      </div>
      {sub && (
        <div className={subClassName} title={subTitle}>
          {sub}
        </div>
      )}
    </>
  )
}

/**
 * Turns a row with an enabled/disabled status the other way through `mutation`, and says which
 * way it went.
 */
export function flipStatus<S extends number>(
  mutation: { mutate: (vars: { id: number; status: S }, opts: { onSuccess: () => void }) => void },
  row: { id: number; status: number },
  codes: { enabled: S; disabled: S },
  told: { enabled: string; disabled: string },
) {
  const status = row.status === codes.enabled ? codes.disabled : codes.enabled
  mutation.mutate({ id: row.id, status }, { onSuccess: () => notify.success(status === codes.enabled ? told.enabled : told.disabled) })
}

/** A row's edit button. */
export function EditAction({ onClick, testId }: { onClick: () => void; testId: string }) {
  const { t } = useTranslation()
  return (
    <RowAction label={t('common:actions.edit')} onClick={onClick} testId={testId}>
      <PencilIcon />
    </RowAction>
  )
}

/** A row's delete button (it asks first: `onClick` opens the question). */
export function DeleteAction({ onClick, testId }: { onClick: () => void; testId: string }) {
  const { t } = useTranslation()
  return (
    <RowAction label={t('common:actions.delete')} onClick={onClick} testId={testId} className="text-destructive hover:text-destructive">
      <Trash2Icon />
    </RowAction>
  )
}

/** A row's enable/disable button: what it does is the opposite of `enabled`. */
export function ToggleAction({
  enabled,
  onClick,
  disabled,
  testId,
}: {
  enabled: boolean
  onClick: () => void
  disabled?: boolean
  testId: string
}) {
  const { t } = useTranslation()
  return (
    <RowAction
      label={enabled ? t('common:actions.disable') : t('common:actions.enable')}
      onClick={onClick}
      disabled={disabled}
      testId={testId}
    >
      {enabled ? <PowerOffIcon /> : <PowerIcon />}
    </RowAction>
  )
}

/**
 * The body of a list card: a spinner while loading, what went wrong (with a retry) when the
 * list could not be read, the empty text, else the table. A failed list never reads as empty.
 */
export function ListState({
  loading,
  empty,
  emptyText,
  emptyTestId,
  query,
  children,
}: {
  loading: boolean
  empty: boolean
  emptyText: string
  emptyTestId: string
  /** The list's query: when it failed, its error is shown with a retry that reads it again. */
  query?: { isError: boolean; error: unknown; refetch: () => unknown }
  children: ReactNode
}) {
  const { t } = useTranslation()
  if (query?.isError) {
    return (
      <div className="flex flex-col items-center gap-3 p-10 text-center" role="alert" data-testid={`${emptyTestId}-error`}>
        <TriangleAlertIcon aria-hidden className="size-8 text-destructive" />
        <p className="font-medium">{t('common:state.loadFailed')}</p>
        <p className="max-w-md text-sm break-words text-muted-foreground">{errorText(query.error)}</p>
        <Button variant="outline" size="sm" onClick={() => void query.refetch()} data-testid={`${emptyTestId}-retry`}>
          <RotateCwIcon />
          {t('common:actions.retry')}
        </Button>
      </div>
    )
  }
  if (loading) {
    return (
      <div className="flex justify-center p-10" role="status" aria-label={t('common:state.loading')}>
        <Spinner className="size-6" />
      </div>
    )
  }
  if (empty) {
    return (
      <p className="p-10 text-center text-sm text-muted-foreground" data-testid={emptyTestId}>
        {emptyText}
      </p>
    )
  }
  return <>{children}</>
}

export interface ConfirmDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  title: string
  description: ReactNode
  /** The confirm button's text: "Delete" unless told. */
  confirmLabel?: string
  onConfirm: () => void
  pending?: boolean
  /** Prefix of the test ids: `${testId}` on the dialog, `${testId}-confirm` on the button. */
  testId: string
  /** The confirm button's test id, when not `${testId}-confirm`. */
  confirmTestId?: string
  destructive?: boolean
}

/** A yes/no question before a destructive or wide-reaching action. */
export function ConfirmDialog({
  open,
  onOpenChange,
  title,
  description,
  confirmLabel,
  onConfirm,
  pending,
  testId,
  confirmTestId = `${testId}-confirm`,
  destructive = true,
}: ConfirmDialogProps) {
  const { t } = useTranslation()
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid={testId}>
        <DialogHeader>
          <DialogTitle>{title}</DialogTitle>
          <DialogDescription>{description}</DialogDescription>
        </DialogHeader>
        <DialogFooter>
          <Button variant="outline" onClick={() => onOpenChange(false)}>
            {t('common:actions.cancel')}
          </Button>
          <Button
            variant={destructive ? 'destructive' : 'default'}
            onClick={onConfirm}
            disabled={pending}
            data-testid={confirmTestId}
          >
            {pending && <Spinner />}
            {confirmLabel ?? t('common:actions.delete')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
