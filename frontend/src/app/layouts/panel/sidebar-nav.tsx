import { ChevronDownIcon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { NavLink, useLocation } from 'react-router'
import { APP_VERSION } from '@/config'
import { cn } from '@/lib/utils'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import { findMenuTrail, visibleMenu, type MenuItem } from '../../menu'

const itemClass = (active: boolean) =>
  cn(
    'flex w-full items-center gap-3 rounded-lg px-3 py-2 text-sm font-medium transition-colors [&_svg]:size-4',
    active ? 'bg-accent text-accent-foreground' : 'text-muted-foreground hover:bg-muted hover:text-foreground',
  )

/**
 * Groups, collapse sections and items of the menu this user may see (spec 2.3); the current
 * item is marked and the collapse that holds it opens by itself (also when the path changes).
 */
export function SidebarNav({ onNavigate }: { onNavigate?: () => void }) {
  const { t } = useTranslation()
  const user = useUser()
  const site = useSiteInfo()
  const { pathname } = useLocation()
  const trail = findMenuTrail(pathname)
  const selected = trail?.item.id
  const groups = visibleMenu({ role: user?.role, site })

  // Which collapses are open (spec 3, "Customization state": isOpen). The one holding the
  // current page opens on every navigation to it; the others keep what the user chose.
  const [open, setOpen] = useState<Record<string, boolean>>(() => (trail?.collapse ? { [trail.collapse.id]: true } : {}))
  const [seenPath, setSeenPath] = useState(pathname)
  if (seenPath !== pathname) {
    setSeenPath(pathname)
    if (trail?.collapse && !open[trail.collapse.id]) setOpen((o) => ({ ...o, [trail.collapse!.id]: true }))
  }

  const link = (item: MenuItem, nested = false) => {
    const Icon = item.icon
    const active = item.id === selected
    return (
      <li key={item.id}>
        <NavLink
          to={item.url}
          onClick={onNavigate}
          aria-current={active ? 'page' : undefined}
          data-testid={`menu-${item.id}`}
          className={cn(itemClass(active), nested && 'pl-9')}
        >
          <Icon aria-hidden />
          <span className="truncate">{t(item.title)}</span>
        </NavLink>
      </li>
    )
  }

  return (
    <div className="flex h-full flex-col">
      <nav aria-label={t('panel:menu.label')} className="flex-1 overflow-y-auto px-3 py-4" data-testid="sidebar-nav">
        {groups.map((group) => (
          <div key={group.id} className="mb-4" data-testid={`menu-group-${group.id}`}>
            <div className="px-3 pb-1 text-xs font-medium tracking-wide text-muted-foreground">{t(group.title)}</div>
            <ul className="grid gap-0.5">
              {group.children.map((entry) => {
                if (entry.type === 'item') return link(entry)
                const Icon = entry.icon
                const isOpen = open[entry.id] === true
                const holdsCurrent = trail?.collapse?.id === entry.id
                const listId = `menu-collapse-${entry.id}-items`
                return (
                  <li key={entry.id}>
                    <button
                      type="button"
                      className={cn(itemClass(false), holdsCurrent && 'text-foreground')}
                      aria-expanded={isOpen}
                      aria-controls={listId}
                      onClick={() => setOpen((o) => ({ ...o, [entry.id]: !isOpen }))}
                      data-testid={`menu-collapse-${entry.id}`}
                    >
                      <Icon aria-hidden />
                      <span className="truncate">{t(entry.title)}</span>
                      <ChevronDownIcon
                        aria-hidden
                        className={cn('ml-auto transition-transform', isOpen ? 'rotate-180' : 'rotate-0')}
                      />
                    </button>
                    {isOpen && (
                      <ul id={listId} className="mt-0.5 grid gap-0.5">
                        {entry.children.map((item) => link(item, true))}
                      </ul>
                    )}
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
