import { CreditCardIcon } from 'lucide-react'
import { useState } from 'react'
import { cn } from '@/lib/utils'

/** An icon value that can be shown as an image: an http(s), site-relative or data: address. */
function isImageAddress(icon: string): boolean {
  return /^(https?:\/\/|\/|data:image\/)/i.test(icon.trim())
}

/** A gateway's icon (an image address); a card symbol when there is none or it fails to load. */
export function GatewayIcon({ icon, className }: { icon: string; className?: string }) {
  const [failed, setFailed] = useState<string | null>(null)
  if (!isImageAddress(icon) || failed === icon) {
    return <CreditCardIcon aria-hidden className={cn('size-5 shrink-0 text-muted-foreground', className)} />
  }
  return (
    <img
      src={icon}
      alt=""
      aria-hidden
      className={cn('size-5 shrink-0 rounded-sm object-contain', className)}
      onError={() => setFailed(icon)}
    />
  )
}
