import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Label } from '@/components/ui/label'
import { Spinner } from '@/components/ui/spinner'
import { Textarea } from '@/components/ui/textarea'
import { notify } from '@/lib/toast'
import { useBatchPrices } from '../api/mutations'
import { parseBatch } from '../schemas'
import type { Price } from '../types'

const EXAMPLE = JSON.stringify(
  [
    { model: 'gpt-4o-mini', type: 'tokens', channel_type: 1, input: 0.075, output: 0.3 },
    { model: 'dall-e-3', type: 'times', channel_type: 1, input: 20, output: 0 },
  ],
  null,
  2,
)

/** Create or replace many prices from JSON (the current rows to start from, or an example). */
export function PriceBatchDialog({
  open,
  onOpenChange,
  initial,
}: {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** Rows to prefill (the selection); empty shows an example. */
  initial: Price[]
}) {
  const { t } = useTranslation()
  const mutation = useBatchPrices()
  const [text, setText] = useState('')
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    if (!open) return
    setError(null)
    setText(
      initial.length
        ? JSON.stringify(
            initial.map(({ model, type, channel_type, input, output, extra_ratios, locked }) => ({
              model,
              type,
              channel_type,
              input,
              output,
              extra_ratios,
              locked,
            })),
            null,
            2,
          )
        : EXAMPLE,
    )
  }, [open, initial])

  const submit = () => {
    const parsed = parseBatch(text, t)
    if ('error' in parsed) {
      setError(parsed.error)
      return
    }
    setError(null)
    mutation.mutate(parsed.rows, {
      onSuccess: (res) => {
        notify.success(t('pricing:toast.batchSaved', { count: res.count }))
        onOpenChange(false)
      },
    })
  }

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-2xl" data-testid="price-batch-dialog">
        <DialogHeader>
          <DialogTitle>{t('pricing:batch.title')}</DialogTitle>
          <DialogDescription>{t('pricing:batch.description')}</DialogDescription>
        </DialogHeader>
        <div className="grid grid-cols-1 gap-2">
          <Label htmlFor="price-batch-json">{t('pricing:batch.label')}</Label>
          <Textarea
            id="price-batch-json"
            value={text}
            onChange={(e) => setText(e.target.value)}
            rows={14}
            spellCheck={false}
            className="font-mono text-xs"
            aria-invalid={error ? true : undefined}
            data-testid="price-batch-json"
          />
          {error && (
            <p className="text-sm text-destructive" role="alert" data-testid="price-batch-error">
              {error}
            </p>
          )}
        </div>
        <DialogFooter>
          <Button variant="outline" onClick={() => onOpenChange(false)}>
            {t('common:actions.cancel')}
          </Button>
          <Button onClick={submit} disabled={mutation.isPending} data-testid="price-batch-submit">
            {mutation.isPending && <Spinner />}
            {t('pricing:batch.submit')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
