import { CopyIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Input } from '@/components/ui/input'
import { copyText } from '@/lib/clipboard'
import { notify, notifyCopied } from '@/lib/toast'

export interface TokenKeyDialogProps {
  /** The full key to show; null closes the dialog. */
  tokenKey: string | null
  /** `created`: right after creation (shown once); `manual`: copying failed, copy by hand. */
  mode: 'created' | 'manual'
  onClose: () => void
}

export function TokenKeyDialog({ tokenKey, mode, onClose }: TokenKeyDialogProps) {
  const { t } = useTranslation()
  const copy = async () => {
    if (!tokenKey) return
    if (await copyText(tokenKey)) notifyCopied(tokenKey, 'api-key.txt')
    else notify.warning(t('common:copy.failed'))
  }
  return (
    <Dialog open={tokenKey !== null} onOpenChange={(open) => !open && onClose()}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid="token-key-dialog">
        <DialogHeader>
          <DialogTitle>{mode === 'created' ? t('tokens:created.title') : t('tokens:keyDialog.title')}</DialogTitle>
          <DialogDescription>
            {mode === 'created' ? t('tokens:created.description') : t('tokens:keyDialog.description')}
          </DialogDescription>
        </DialogHeader>
        <Input
          readOnly
          value={tokenKey ?? ''}
          aria-label={t('tokens:created.key')}
          className="font-mono text-xs"
          onFocus={(e) => e.currentTarget.select()}
          data-testid="token-full-key"
        />
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>
            {t('common:actions.close')}
          </Button>
          <Button onClick={() => void copy()} data-testid="token-key-copy">
            <CopyIcon />
            {t('common:actions.copy')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
