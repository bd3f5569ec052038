import { useState } from 'react'
import { cn } from '@/lib/utils'
import type { User } from '@/types/api'

/** The user's picture, or a default one (their initial) when there is none or it fails. */
export function UserAvatar({ user, className }: { user: User; className?: string }) {
  const [failed, setFailed] = useState(false)
  const name = user.display_name || user.username
  return (
    <span
      className={cn(
        'inline-flex size-8 shrink-0 items-center justify-center overflow-hidden rounded-full bg-primary/15 text-sm font-semibold text-primary uppercase',
        className,
      )}
    >
      {user.avatar_url && !failed ? (
        <img src={user.avatar_url} alt="" className="size-full object-cover" onError={() => setFailed(true)} />
      ) : (
        <span aria-hidden>{name.slice(0, 1)}</span>
      )}
    </span>
  )
}
