import { ShieldOffIcon } from 'lucide-react'
import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { Screen } from '@/components/screen'
import { Button } from '@/components/ui/button'
import { useUser } from '@/stores/session'
import { ROLE } from '@/types/api'

/** Says that the screen exists but is not for this account (rather than "not found"). */
export function NoPermission() {
  const { t } = useTranslation()
  return (
    <section
      className="flex flex-col items-center justify-center gap-4 px-4 py-16 text-center"
      data-testid="no-permission"
    >
      <ShieldOffIcon aria-hidden className="size-12 text-muted-foreground/60" />
      <h1 className="text-2xl font-semibold">{t('common:noPermission.title')}</h1>
      <p className="max-w-md text-muted-foreground">{t('common:noPermission.description')}</p>
      <Button asChild variant="outline">
        <Link to="/panel/dashboard">{t('common:noPermission.back')}</Link>
      </Button>
    </section>
  )
}

/**
 * A screen for administrators (role 10 and up), or for the super administrator with
 * `min={ROLE.root}`: anyone else sees "no permission" in place (the server refuses them anyway).
 */
export function AdminOnly({ children, min = ROLE.admin }: { children: ReactNode; min?: number }) {
  const user = useUser()
  if ((user?.role ?? 0) < min) return <NoPermission />
  return <>{children}</>
}

/** An administrators' screen: its heading and content, or "no permission" for anyone else. */
export function AdminScreen({
  title,
  description,
  min,
  children,
}: {
  title: ReactNode
  description?: ReactNode
  min?: number
  children: ReactNode
}) {
  return (
    <AdminOnly min={min}>
      <Screen title={title} description={description}>
        {children}
      </Screen>
    </AdminOnly>
  )
}
