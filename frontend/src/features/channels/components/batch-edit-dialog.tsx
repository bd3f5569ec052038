import { useId, useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { useBatchAzureApi, useBatchRemoveModel } from '../api/batch-edit'

export type BatchEditMode = 'azure' | 'model'

const API_VERSION = /^\d{4}-\d{2}-\d{2}(-[a-z0-9.-]+)?$/

export interface BatchEditDialogProps {
  /** Which edit; null = closed. */
  mode: BatchEditMode | null
  onClose: () => void
  /** The selected channels; empty = every (Azure) channel. */
  ids: number[]
}

/**
 * Batch edits of the channels screen: the API version of Azure channels, or removing a model.
 * Asks for the value, then for a confirmation; removing a model then shows which channels kept it.
 * Render it with `key={mode}` so that each opening starts afresh.
 */
export function BatchEditDialog({ mode, onClose, ids }: BatchEditDialogProps) {
  const { t } = useTranslation()
  const id = useId()
  const [value, setValue] = useState('')
  const [error, setError] = useState('')
  const [step, setStep] = useState<'edit' | 'confirm' | 'done'>('edit')
  const [kept, setKept] = useState<string[]>([])
  const azure = useBatchAzureApi()
  const model = useBatchRemoveModel()

  const trimmed = value.trim()
  const target =
    ids.length > 0
      ? t('channels:batch.targetSelected', { count: ids.length })
      : mode === 'azure'
        ? t('channels:batch.targetAllAzure')
        : t('channels:batch.targetAll')

  const next = (e: FormEvent) => {
    e.preventDefault()
    const label = mode === 'azure' ? t('channels:batch.version') : t('channels:batch.model')
    if (!trimmed) return setError(t('channels:validation.required', { field: label }))
    if (mode === 'azure' && !API_VERSION.test(trimmed)) return setError(t('channels:validation.apiVersion'))
    setError('')
    setStep('confirm')
  }

  const apply = () => {
    const body = { ...(ids.length > 0 ? { ids } : {}), value: trimmed }
    if (mode === 'azure') {
      azure.mutate(body, {
        onSuccess: ({ updated }) => {
          notify.success(t('channels:batch.azureDone', { count: updated }))
          onClose()
        },
      })
    } else {
      model.mutate(body, {
        onSuccess: (r) => {
          notify.success(t('channels:batch.modelDone', { count: r.updated }))
          if (r.kept.length === 0) return onClose()
          setKept(r.kept)
          setStep('done')
        },
      })
    }
  }

  const pending = azure.isPending || model.isPending

  return (
    <Dialog open={mode !== null} onOpenChange={(open) => !open && onClose()}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid="channel-batch-dialog">
        <DialogHeader>
          <DialogTitle>{mode === 'azure' ? t('channels:batch.azureTitle') : t('channels:batch.modelTitle')}</DialogTitle>
          <DialogDescription data-testid="channel-batch-target">{target}</DialogDescription>
        </DialogHeader>
        {step === 'edit' && (
          <form onSubmit={next} className="grid gap-4" noValidate>
            <div className="grid gap-1.5">
              <Label htmlFor={`${id}-value`}>{mode === 'azure' ? t('channels:batch.version') : t('channels:batch.model')}</Label>
              <Input
                id={`${id}-value`}
                value={value}
                onChange={(e) => setValue(e.target.value)}
                placeholder={mode === 'azure' ? '2024-10-21' : 'gpt-4o'}
                aria-invalid={error ? true : undefined}
                data-testid="channel-batch-value"
              />
              {error ? (
                <p className="text-sm text-destructive" role="alert">
                  {error}
                </p>
              ) : (
                <p className="text-xs text-muted-foreground">
                  {mode === 'azure' ? t('channels:batch.versionHint') : t('channels:batch.modelHint')}
                </p>
              )}
            </div>
            <DialogFooter>
              <Button type="button" variant="outline" onClick={onClose}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" data-testid="channel-batch-apply">
                {t('channels:batch.apply')}
              </Button>
            </DialogFooter>
          </form>
        )}
        {step === 'confirm' && (
          <div className="grid gap-4">
            <p className="text-sm font-medium">{t('channels:batch.confirmTitle')}</p>
            <p className="text-sm" data-testid="channel-batch-question">
              {mode === 'azure'
                ? t('channels:batch.confirmAzure', { value: trimmed })
                : t('channels:batch.confirmModel', { value: trimmed })}
            </p>
            <DialogFooter>
              <Button variant="outline" onClick={() => setStep('edit')}>
                {t('common:actions.cancel')}
              </Button>
              <Button variant="destructive" onClick={apply} disabled={pending} data-testid="channel-batch-confirm">
                {pending && <Spinner />}
                {t('channels:batch.apply')}
              </Button>
            </DialogFooter>
          </div>
        )}
        {step === 'done' && (
          <div className="grid gap-4">
            <p className="text-sm" data-testid="channel-batch-kept">
              {t('channels:batch.kept', { names: kept.join(', ') })}
            </p>
            <DialogFooter>
              <Button onClick={onClose}>{t('common:actions.close')}</Button>
            </DialogFooter>
          </div>
        )}
      </DialogContent>
    </Dialog>
  )
}
