import { Link } from 'react-router'
import { useSiteInfo } from '@/stores/site'

/** Logo (falls back to the bundled mark) and system name. */
export function Brand({ to }: { to: string }) {
  const { system_name, logo } = useSiteInfo()
  return (
    <Link to={to} className="flex min-w-0 items-center gap-2 font-semibold" data-testid="brand">
      <img
        src={logo || '/favicon.svg'}
        alt=""
        className="size-7 shrink-0 rounded-md"
        onError={(e) => {
          if (!e.currentTarget.src.endsWith('/favicon.svg')) e.currentTarget.src = '/favicon.svg'
        }}
      />
      <span className="truncate">{system_name}</span>
    </Link>
  )
}
