import { useTranslation } from 'react-i18next'
import { NavLink, useLocation } from 'react-router'
import { APP_VERSION } from '@/config'
import { cn } from '@/lib/utils'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import { findMenuTrail, visibleMenu } from '../../menu'

/** Groups and items of the menu this user may see; the current item is marked. */
export function SidebarNav({ onNavigate }: { onNavigate?: () => void }) {
  const { t } = useTranslation()
  const user = useUser()
  const site = useSiteInfo()
  const { pathname } = useLocation()
  const selected = findMenuTrail(pathname)?.item.id
  const groups = visibleMenu({ role: user?.role, site })

  return (
    <div className="flex h-full flex-col">
      <nav aria-label={t('panel:menu.label')} className="flex-1 overflow-y-auto px-3 py-4" data-testid="sidebar-nav">
        {groups.map((group) => (
          <div key={group.id} className="mb-4" data-testid={`menu-group-${group.id}`}>
            <div className="px-3 pb-1 text-xs font-medium tracking-wide text-muted-foreground">{t(group.title)}</div>
            <ul className="grid gap-0.5">
              {group.children.map((item) => {
                const Icon = item.icon
                const active = item.id === selected
                return (
                  <li key={item.id}>
                    <NavLink
                      to={item.url}
                      onClick={onNavigate}
                      aria-current={active ? 'page' : undefined}
                      data-testid={`menu-${item.id}`}
                      className={cn(
                        'flex items-center gap-3 rounded-lg px-3 py-2 text-sm font-medium transition-colors [&_svg]:size-4',
                        active
                          ? 'bg-accent text-accent-foreground'
                          : 'text-muted-foreground hover:bg-muted hover:text-foreground',
                      )}
                    >
                      <Icon aria-hidden />
                      <span className="truncate">{t(item.title)}</span>
                    </NavLink>
                  </li>
                )
              })}
            </ul>
          </div>
        ))}
      </nav>
      <div className="flex justify-center border-t p-3">
        <span
          className="rounded-full border px-2.5 py-0.5 text-xs font-medium text-muted-foreground"
          data-testid="version-chip"
        >
          {APP_VERSION}
        </span>
      </div>
    </div>
  )
}
