import { CopyIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { copyText } from '@/lib/clipboard'
import { notify, notifyCopied } from '@/lib/toast'
import { cn } from '@/lib/utils'

/** A secret or a snippet to copy: read-only text with a copy button (manual copy on refusal). */
export function CopyField({
  value,
  label,
  testId,
  multiline = false,
  downloadName,
}: {
  value: string
  label: string
  testId: string
  multiline?: boolean
  /** File name of the copy toast's download (default copied.txt). */
  downloadName?: string
}) {
  const { t } = useTranslation()
  const copy = async () => {
    if (await copyText(value)) notifyCopied(value, downloadName)
    else notify.warning(t('common:copy.failed'))
  }
  return (
    <div className="flex items-start gap-2">
      {multiline ? (
        <pre
          className="min-w-0 flex-1 overflow-x-auto rounded-md border bg-muted/50 p-3 font-mono text-xs whitespace-pre"
          aria-label={label}
          data-testid={testId}
        >
          {value}
        </pre>
      ) : (
        <input
          readOnly
          value={value}
          aria-label={label}
          onFocus={(e) => e.currentTarget.select()}
          className={cn(
            'h-9 min-w-0 flex-1 rounded-md border border-input bg-muted/50 px-3 font-mono text-xs outline-none',
            'focus-visible:ring-2 focus-visible:ring-ring/40',
          )}
          data-testid={testId}
        />
      )}
      <Button
        type="button"
        variant="outline"
        size="icon"
        onClick={() => void copy()}
        aria-label={t('common:actions.copy')}
        title={t('common:actions.copy')}
        data-testid={`${testId}-copy`}
      >
        <CopyIcon />
      </Button>
    </div>
  )
}
