import QRCode from 'qrcode'
import { useEffect, useState } from 'react'
import { Spinner } from '@/components/ui/spinner'
import { cn } from '@/lib/utils'

/** How a code is drawn: SVG (no canvas needed), error correction M, a one-module quiet zone. */
export const QR_CODE_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 1 } as const

/** `content` as a QR code: an SVG image address (data:). */
export async function qrCodeImage(content: string): Promise<string> {
  const svg = await QRCode.toString(content, QR_CODE_OPTIONS)
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`
}

/** The image drawn for `content`, or null when it could not be drawn (e.g. too long). */
type Drawn = { content: string; src: string | null }

/**
 * `content` as a scannable QR code image, `label` its alternative text (what to scan it with);
 * `pendingLabel` while it is drawn, `failedLabel` if it cannot be.
 */
export function QrCode({
  content,
  label,
  pendingLabel,
  failedLabel,
  testId,
  className,
}: {
  content: string
  label: string
  pendingLabel: string
  failedLabel: string
  testId: string
  className?: string
}) {
  const [drawn, setDrawn] = useState<Drawn | null>(null)

  useEffect(() => {
    let live = true
    qrCodeImage(content).then(
      (src) => {
        if (live) setDrawn({ content, src })
      },
      () => {
        if (live) setDrawn({ content, src: null })
      },
    )
    return () => {
      live = false
    }
  }, [content])

  // A code drawn for earlier content is not shown for this one.
  const current = drawn?.content === content ? drawn : null
  const frame = cn('mx-auto flex size-52 items-center justify-center rounded-md border p-2', className)
  if (!current) {
    return (
      <div className={cn(frame, 'flex-col gap-2 text-sm text-muted-foreground')} aria-busy data-testid={`${testId}-pending`}>
        <Spinner />
        <span className="text-center">{pendingLabel}</span>
      </div>
    )
  }
  if (current.src === null) {
    return (
      <p className="rounded-md border border-dashed p-3 text-sm text-muted-foreground" data-testid={`${testId}-failed`}>
        {failedLabel}
      </p>
    )
  }
  return (
    // A white frame: phones read a dark code on a light ground, in the dark theme too.
    <div className={cn(frame, 'bg-white')}>
      <img src={current.src} alt={label} title={label} className="size-full object-contain" data-testid={testId} />
    </div>
  )
}
