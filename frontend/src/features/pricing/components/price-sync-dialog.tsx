import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { useSyncPrices } from '../api/mutations'
import type { SyncMode, SyncResult } from '../types'

const MODES: SyncMode[] = ['add', 'update', 'overwrite']

/** Fetch prices from a price server: preview (dry run) first, then apply. Locked rows never change. */
export function PriceSyncDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useTranslation()
  const mutation = useSyncPrices()
  const [mode, setMode] = useState<SyncMode>('add')
  const [url, setUrl] = useState('')
  const [preview, setPreview] = useState<SyncResult | null>(null)
  const [urlError, setUrlError] = useState<string | null>(null)

  useEffect(() => {
    if (open) setPreview(null)
  }, [open])

  const run = (dryRun: boolean) => {
    const target = url.trim().replace(/\/+$/, '')
    if (target && !/^https?:\/\/\S+$/.test(target)) {
      setUrlError(t('pricing:sync.urlInvalid'))
      return
    }
    setUrlError(null)
    mutation.mutate(
      { mode, url: target, dry_run: dryRun },
      {
        onSuccess: (res) => {
          if (dryRun) {
            setPreview(res)
            return
          }
          notify.success(t('pricing:sync.done', { inserted: res.inserted, updated: res.updated, deleted: res.deleted }))
          onOpenChange(false)
        },
      },
    )
  }

  const list = (label: string, models: string[] | undefined) =>
    models && models.length > 0 ? (
      <p>
        <span className="font-medium">{label}: </span>
        <span className="font-mono text-xs">{models.slice(0, 30).join(', ')}</span>
        {models.length > 30 && ' …'}
      </p>
    ) : null

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-xl" data-testid="price-sync-dialog">
        <DialogHeader>
          <DialogTitle>{t('pricing:sync.title')}</DialogTitle>
          <DialogDescription>{t('pricing:sync.description')}</DialogDescription>
        </DialogHeader>
        <div className="grid grid-cols-1 gap-4">
          <div className="grid grid-cols-1 gap-2">
            <Label htmlFor="price-sync-mode">{t('pricing:sync.mode')}</Label>
            <NativeSelect
              id="price-sync-mode"
              value={mode}
              onChange={(e) => {
                setMode(e.target.value as SyncMode)
                setPreview(null)
              }}
            >
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {t(`pricing:sync.modes.${m}`)}
                </option>
              ))}
            </NativeSelect>
          </div>
          <div className="grid grid-cols-1 gap-2">
            <Label htmlFor="price-sync-url">{t('pricing:sync.url')}</Label>
            <Input
              id="price-sync-url"
              value={url}
              onChange={(e) => {
                setUrl(e.target.value)
                setPreview(null)
              }}
              placeholder={t('pricing:sync.urlPlaceholder')}
              aria-invalid={urlError ? true : undefined}
            />
            {urlError && (
              <p className="text-sm text-destructive" role="alert">
                {urlError}
              </p>
            )}
          </div>
          {preview && (
            <div className="grid gap-1 rounded-lg border bg-muted/40 p-3 text-sm" data-testid="price-sync-preview">
              <p>
                {t('pricing:sync.summary', {
                  inserted: preview.inserted,
                  updated: preview.updated,
                  deleted: preview.deleted,
                  unchanged: preview.unchanged,
                  locked: preview.locked,
                  skipped: preview.skipped,
                })}
              </p>
              {list(t('pricing:sync.insert'), preview.insert_models)}
              {list(t('pricing:sync.update'), preview.update_models)}
              {list(t('pricing:sync.delete'), preview.delete_models)}
              {preview.errors.length > 0 && <p className="text-xs text-muted-foreground">{preview.errors.join('; ')}</p>}
            </div>
          )}
        </div>
        <DialogFooter>
          <Button variant="outline" onClick={() => run(true)} disabled={mutation.isPending} data-testid="price-sync-preview-button">
            {mutation.isPending && <Spinner />}
            {t('pricing:sync.preview')}
          </Button>
          <Button onClick={() => run(false)} disabled={mutation.isPending || !preview} data-testid="price-sync-apply">
            {t('pricing:sync.apply')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
