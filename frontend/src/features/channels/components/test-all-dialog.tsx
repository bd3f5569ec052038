import { useTranslation } from 'react-i18next'
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import type { TestAllSummary } from '../types'

/** What testing every channel found when some failed: each failure with its reason. */
export function TestAllDialog({ result, onClose }: { result: TestAllSummary | null; onClose: () => void }) {
  const { t } = useTranslation()
  return (
    <Dialog open={result !== null} onOpenChange={(open) => !open && onClose()}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid="channel-test-all-result">
        <DialogHeader>
          <DialogTitle>{t('channels:testAll.title', { failed: result?.failed ?? 0, tested: result?.tested ?? 0 })}</DialogTitle>
          <DialogDescription>{result && t('channels:toast.testedAll', { ...result })}</DialogDescription>
        </DialogHeader>
        <ul className="grid max-h-80 gap-2 overflow-y-auto text-sm">
          {(result?.failures ?? []).map((f) => (
            <li key={f.id} className="rounded-md border p-2" data-testid="channel-test-failure">
              <p className="font-medium">{`#${f.id} ${f.name}`}</p>
              <p className="break-words text-muted-foreground">{f.message}</p>
            </li>
          ))}
        </ul>
      </DialogContent>
    </Dialog>
  )
}
