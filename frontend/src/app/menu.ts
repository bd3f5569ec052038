import { KeyRoundIcon, LayoutDashboardIcon, ScrollTextIcon, type LucideIcon } from 'lucide-react'
import type { ParseKeys } from 'i18next'
import { isAdmin } from '@/lib/roles'
import type { SiteInfo } from '@/types/api'

/**
 * The console sidebar (spec sections 2.3 and 3, "Menu item"): groups of items. A new screen is
 * one entry here (plus its route in router.tsx). Only screens that exist are listed.
 */
export interface MenuItem {
  id: string
  type: 'item'
  /** Translation key of the label. */
  title: ParseKeys
  url: string
  icon: LucideIcon
  /** Shown to administrators only (role >= 10). */
  isAdmin?: boolean
  /** Hidden while this site flag is false (e.g. UserInvoiceMonth for the monthly bill). */
  siteFlag?: keyof SiteInfo
}

export interface MenuGroup {
  id: string
  type: 'group'
  title: ParseKeys
  children: MenuItem[]
}

export const MENU: MenuGroup[] = [
  {
    id: 'dashboard',
    type: 'group',
    title: 'panel:menu.group.dashboard',
    children: [
      { id: 'dashboard', type: 'item', title: 'panel:menu.dashboard', url: '/panel/dashboard', icon: LayoutDashboardIcon },
    ],
  },
  {
    id: 'setting',
    type: 'group',
    title: 'panel:menu.group.setting',
    children: [{ id: 'token', type: 'item', title: 'panel:menu.token', url: '/panel/token', icon: KeyRoundIcon }],
  },
  {
    id: 'usage',
    type: 'group',
    title: 'panel:menu.group.usage',
    children: [{ id: 'log', type: 'item', title: 'panel:menu.log', url: '/panel/log', icon: ScrollTextIcon }],
  },
]

export interface MenuContext {
  role: number | undefined
  site?: Partial<SiteInfo>
}

export function isItemVisible(item: MenuItem, { role, site }: MenuContext): boolean {
  if (item.isAdmin && !isAdmin(role)) return false
  if (item.siteFlag && !site?.[item.siteFlag]) return false
  return true
}

/** The menu as this user sees it: hidden items removed, groups left empty omitted. */
export function visibleMenu(ctx: MenuContext, menu: MenuGroup[] = MENU): MenuGroup[] {
  return menu
    .map((group) => ({ ...group, children: group.children.filter((item) => isItemVisible(item, ctx)) }))
    .filter((group) => group.children.length > 0)
}

/** The group and item whose url the path is (or is under); /panel itself is the dashboard. */
export function findMenuTrail(
  pathname: string,
  menu: MenuGroup[] = MENU,
): { group: MenuGroup; item: MenuItem } | undefined {
  const path = pathname.replace(/\/+$/, '') || '/'
  const target = path === '/panel' ? '/panel/dashboard' : path
  for (const group of menu) {
    for (const item of group.children) {
      if (target === item.url || target.startsWith(`${item.url}/`)) return { group, item }
    }
  }
  return undefined
}
