import { CopyIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Textarea } from '@/components/ui/textarea'
import { copyText } from '@/lib/clipboard'
import { notify } from '@/lib/toast'

/** The codes just created, one a line, with a button that copies them all. */
export function RedemptionCodesDialog({ codes, onClose }: { codes: string[] | null; onClose: () => void }) {
  const { t } = useTranslation()
  const text = (codes ?? []).join('\n')
  const copy = async () => {
    if (await copyText(text)) notify.success(t('common:copy.success'))
    else notify.warning(t('common:copy.failed'))
  }
  return (
    <Dialog open={codes !== null} onOpenChange={(open) => !open && onClose()}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid="redemption-codes-dialog">
        <DialogHeader>
          <DialogTitle>{t('redemptions:codes.title')}</DialogTitle>
          <DialogDescription>{t('redemptions:codes.description', { count: codes?.length ?? 0 })}</DialogDescription>
        </DialogHeader>
        <Textarea
          readOnly
          value={text}
          rows={Math.min(10, Math.max(3, codes?.length ?? 0))}
          aria-label={t('redemptions:codes.title')}
          className="font-mono text-xs"
          onFocus={(e) => e.currentTarget.select()}
          data-testid="redemption-codes"
        />
        <DialogFooter>
          <Button variant="outline" onClick={onClose}>
            {t('common:actions.close')}
          </Button>
          <Button onClick={() => void copy()} data-testid="redemption-codes-copy">
            <CopyIcon />
            {t('redemptions:codes.copyAll')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
