import { ChevronRightIcon } from 'lucide-react'
import { Fragment } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useLocation } from 'react-router'
import { findMenuTrail } from '../../menu'

/**
 * Dashboard (home crumb) › group › collapse › screen, from the menu definition. The
 * dashboard group is the home crumb itself, so its screens read "Dashboard › Analytics".
 */
export function Breadcrumbs() {
  const { t } = useTranslation()
  const { pathname } = useLocation()
  const trail = findMenuTrail(pathname)
  const crumbs: { label: string; to?: string }[] = [{ label: t('panel:menu.dashboard'), to: '/panel/dashboard' }]
  if (trail && trail.item.id !== 'dashboard') {
    if (trail.group.id !== 'dashboard') crumbs.push({ label: t(trail.group.title) })
    if (trail.collapse) crumbs.push({ label: t(trail.collapse.title) })
    crumbs.push({ label: t(trail.item.title) })
  }
  return (
    <nav aria-label={t('panel:breadcrumb')} data-testid="breadcrumbs" className="mb-4">
      <ol className="flex flex-wrap items-center gap-1 text-sm text-muted-foreground">
        {crumbs.map((crumb, i) => {
          const last = i === crumbs.length - 1
          return (
            <Fragment key={i}>
              {i > 0 && <ChevronRightIcon aria-hidden className="size-3.5" />}
              <li>
                {crumb.to && !last ? (
                  <Link to={crumb.to} className="hover:text-foreground">
                    {crumb.label}
                  </Link>
                ) : (
                  <span aria-current={last ? 'page' : undefined} className={last ? 'text-foreground' : undefined}>
                    {crumb.label}
                  </span>
                )}
              </li>
            </Fragment>
          )
        })}
      </ol>
    </nav>
  )
}
