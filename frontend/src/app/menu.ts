import { MessagesSquareIcon, BoxesIcon, ChartColumnIcon, KeyRoundIcon, LayoutDashboardIcon, ReceiptTextIcon, ScrollTextIcon, ServerIcon, SettingsIcon, TagsIcon, UserRoundIcon, type LucideIcon } from 'lucide-react'
import { Building2Icon, NetworkIcon, TicketIcon, UsersIcon, UsersRoundIcon, WalletIcon } from 'lucide-react'
import { ImageIcon, ListTodoIcon } from 'lucide-react'
import { BanknoteIcon, BookOpenIcon, BotIcon, CreditCardIcon, SlidersHorizontalIcon, WrenchIcon } from 'lucide-react'
import type { ParseKeys } from 'i18next'
import { isAdmin } from '@/lib/roles'
import { ROLE, type SiteInfo } from '@/types/api'

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
  /** Shown to the super administrator only (role >= 100); hidden from administrators. */
  isRoot?: boolean
  /** Hidden while this site flag is false (e.g. UserInvoiceMonth for the monthly bill). */
  siteFlag?: keyof SiteInfo
}

/** A collapsible section inside a group (spec 2.3: operation, payment settings). */
export interface MenuCollapse {
  id: string
  type: 'collapse'
  title: ParseKeys
  icon: LucideIcon
  children: MenuItem[]
}

export type MenuEntry = MenuItem | MenuCollapse

export interface MenuGroup {
  id: string
  type: 'group'
  title: ParseKeys
  children: MenuEntry[]
}

export const MENU: MenuGroup[] = [
  {
    id: 'dashboard',
    type: 'group',
    title: 'panel:menu.group.dashboard',
    children: [
      { id: 'dashboard', type: 'item', title: 'panel:menu.dashboard', url: '/panel/dashboard', icon: LayoutDashboardIcon },
      { id: 'playground', type: 'item', title: 'panel:menu.playground', url: '/panel/playground', icon: MessagesSquareIcon },
      { id: 'analytics', type: 'item', title: 'analytics:menu', url: '/panel/analytics', icon: ChartColumnIcon, isAdmin: true },
      { id: 'system_info', type: 'item', title: 'system:menu', url: '/panel/system_info', icon: ServerIcon, isAdmin: true },
    ],
  },
  {
    id: 'setting',
    type: 'group',
    title: 'panel:menu.group.setting',
    children: [
      { id: 'user', type: 'item', title: 'users:title', url: '/panel/user', icon: UsersIcon, isAdmin: true },
      { id: 'channel', type: 'item', title: 'channels:title', url: '/panel/channel', icon: NetworkIcon, isAdmin: true },
      {
        id: 'operation',
        type: 'collapse',
        title: 'panel:menu.collapse.operation',
        icon: SlidersHorizontalIcon,
        children: [
          { id: 'user_group', type: 'item', title: 'groups:title', url: '/panel/user_group', icon: UsersRoundIcon, isAdmin: true },
          { id: 'pricing', type: 'item', title: 'pricing:menu.pricing', url: '/panel/pricing', icon: TagsIcon, isAdmin: true },
          { id: 'model_ownedby', type: 'item', title: 'owners:title', url: '/panel/model_ownedby', icon: Building2Icon, isAdmin: true },
        ],
      },
      {
        id: 'payment_settings',
        type: 'collapse',
        title: 'panel:menu.collapse.payment',
        icon: CreditCardIcon,
        children: [
          { id: 'redemption', type: 'item', title: 'redemptions:title', url: '/panel/redemption', icon: TicketIcon, isAdmin: true },
          { id: 'payment', type: 'item', title: 'payment:title', url: '/panel/payment', icon: BanknoteIcon, isAdmin: true },
        ],
      },
      { id: 'token', type: 'item', title: 'panel:menu.token', url: '/panel/token', icon: KeyRoundIcon },
      { id: 'profile', type: 'item', title: 'profile:menu', url: '/panel/profile', icon: UserRoundIcon },
      { id: 'setting', type: 'item', title: 'settings:menu', url: '/panel/setting', icon: SettingsIcon, isAdmin: true },
      { id: 'telegram', type: 'item', title: 'telegram:menu', url: '/panel/telegram', icon: BotIcon, isRoot: true },
      { id: 'guides', type: 'item', title: 'docs:menu.guides', url: '/panel/guides', icon: BookOpenIcon },
      { id: 'tools', type: 'item', title: 'docs:menu.tools', url: '/panel/tools', icon: WrenchIcon },
    ],
  },
  {
    id: 'billing',
    type: 'group',
    title: 'panel:menu.group.billing',
    children: [
      { id: 'topup', type: 'item', title: 'topup:title', url: '/panel/topup', icon: WalletIcon },
      { id: 'model_price', type: 'item', title: 'pricing:menu.modelPrice', url: '/panel/model_price', icon: BoxesIcon },
    ],
  },
  {
    id: 'usage',
    type: 'group',
    title: 'panel:menu.group.usage',
    children: [
      { id: 'log', type: 'item', title: 'panel:menu.log', url: '/panel/log', icon: ScrollTextIcon },
      {
        id: 'invoice',
        type: 'item',
        title: 'invoices:menu',
        url: '/panel/invoice',
        icon: ReceiptTextIcon,
        siteFlag: 'UserInvoiceMonth',
      },
      { id: 'midjourney', type: 'item', title: 'tasks:mj.menu', url: '/panel/midjourney', icon: ImageIcon, isAdmin: true },
      { id: 'task', type: 'item', title: 'tasks:task.menu', url: '/panel/task', icon: ListTodoIcon, isAdmin: true },
    ],
  },
]

export interface MenuContext {
  role: number | undefined
  site?: Partial<SiteInfo>
}

export function isItemVisible(item: MenuItem, { role, site }: MenuContext): boolean {
  if (item.isAdmin && !isAdmin(role)) return false
  if (item.isRoot && (role ?? 0) < ROLE.root) return false
  if (item.siteFlag && !site?.[item.siteFlag]) return false
  return true
}

/** The menu as this user sees it: hidden items removed, collapses and groups left empty omitted. */
export function visibleMenu(ctx: MenuContext, menu: MenuGroup[] = MENU): MenuGroup[] {
  return menu
    .map((group) => ({
      ...group,
      children: group.children.flatMap((entry): MenuEntry[] => {
        if (entry.type === 'item') return isItemVisible(entry, ctx) ? [entry] : []
        const children = entry.children.filter((item) => isItemVisible(item, ctx))
        return children.length > 0 ? [{ ...entry, children }] : []
      }),
    }))
    .filter((group) => group.children.length > 0)
}

/** Every item of a group, those inside its collapses included, in menu order. */
export function groupItems(group: MenuGroup): MenuItem[] {
  return group.children.flatMap((entry) => (entry.type === 'item' ? [entry] : entry.children))
}

export interface MenuTrail {
  group: MenuGroup
  /** The collapse section holding the item, if any. */
  collapse?: MenuCollapse
  item: MenuItem
}

/** The group (and collapse) and item whose url the path is (or is under); /panel itself is the dashboard. */
export function findMenuTrail(pathname: string, menu: MenuGroup[] = MENU): MenuTrail | undefined {
  const path = pathname.replace(/\/+$/, '') || '/'
  const target = path === '/panel' ? '/panel/dashboard' : path
  const matches = (item: MenuItem) => target === item.url || target.startsWith(`${item.url}/`)
  for (const group of menu) {
    for (const entry of group.children) {
      if (entry.type === 'item') {
        if (matches(entry)) return { group, item: entry }
        continue
      }
      const item = entry.children.find(matches)
      if (item) return { group, collapse: entry, item }
    }
  }
  return undefined
}
