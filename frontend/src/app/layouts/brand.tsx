import { Link } from 'react-router'
import { useSite } from '@/stores/site'

/**
 * Logo (falls back to the bundled mark) and system name. The logo is hidden while the site
 * info loads (spec 2.4), so a stored or default logo never flashes before the site's own.
 */
export function Brand({ to }: { to: string }) {
  const { info, isLoading } = useSite()
  const { system_name, logo } = info
  return (
    <Link to={to} className="flex min-w-0 items-center gap-2 font-semibold" data-testid="brand">
      {isLoading ? (
        <span aria-hidden className="size-7 shrink-0 rounded-md bg-muted" data-testid="brand-logo-placeholder" />
      ) : (
        <img
          src={logo || '/favicon.svg'}
          alt=""
          className="size-7 shrink-0 rounded-md"
          onError={(e) => {
            if (!e.currentTarget.src.endsWith('/favicon.svg')) e.currentTarget.src = '/favicon.svg'
          }}
          data-testid="brand-logo"
        />
      )}
      <span className="truncate">{system_name}</span>
    </Link>
  )
}
