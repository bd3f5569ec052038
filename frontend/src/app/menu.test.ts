import { describe, expect, it } from 'vitest'
import { ROLE } from '@/types/api'
import { findMenuTrail, groupItems, visibleMenu, type MenuGroup } from './menu'
import { FileTextIcon, KeyRoundIcon } from 'lucide-react'

const ids = (menu: MenuGroup[]) => menu.map((g) => [g.id, groupItems(g).map((i) => i.id)])

describe('console menu', () => {
  it('shows the users\' screens to every signed-in user', () => {
    expect(ids(visibleMenu({ role: ROLE.user }))).toEqual([
      ['dashboard', ['dashboard', 'playground']],
      ['setting', ['token', 'profile', 'guides', 'tools']],
      ['billing', ['topup', 'model_price']],
      ['usage', ['log']],
    ])
  })

  it('adds the administration screens for administrators', () => {
    const admin = ids(visibleMenu({ role: ROLE.admin }))
    expect(admin).toContainEqual([
      'setting',
      ['user', 'channel', 'user_group', 'pricing', 'model_ownedby', 'redemption', 'payment', 'token', 'profile', 'setting', 'guides', 'tools'],
    ])
    expect(admin).toContainEqual(['billing', ['topup', 'model_price']])
  })

  it('puts the operation and payment screens in collapse sections that users never see', () => {
    const entries = (role: number) =>
      visibleMenu({ role })
        .find((g) => g.id === 'setting')
        ?.children.map((e) => (e.type === 'collapse' ? `${e.id}:${e.children.map((i) => i.id).join(',')}` : e.id))
    expect(entries(ROLE.admin)).toEqual([
      'user',
      'channel',
      'operation:user_group,pricing,model_ownedby',
      'payment_settings:redemption,payment',
      'token',
      'profile',
      'setting',
      'guides',
      'tools',
    ])
    expect(entries(ROLE.user)).toEqual(['token', 'profile', 'guides', 'tools'])
  })

  it('finds the collapse that holds a path, so it opens and the breadcrumb names it', () => {
    const trail = findMenuTrail('/panel/pricing')
    expect(trail?.group.id).toBe('setting')
    expect(trail?.collapse?.id).toBe('operation')
    expect(trail?.item.id).toBe('pricing')
    expect(findMenuTrail('/panel/token')?.collapse).toBeUndefined()
  })

  const sample: MenuGroup[] = [
    {
      id: 'setting',
      type: 'group',
      title: 'panel:menu.group.setting',
      children: [
        { id: 'channel', type: 'item', title: 'panel:menu.token', url: '/panel/channel', icon: KeyRoundIcon, isAdmin: true },
        { id: 'token', type: 'item', title: 'panel:menu.token', url: '/panel/token', icon: KeyRoundIcon },
      ],
    },
    {
      id: 'admin-only',
      type: 'group',
      title: 'panel:menu.group.usage',
      children: [{ id: 'task', type: 'item', title: 'panel:menu.log', url: '/panel/task', icon: FileTextIcon, isAdmin: true }],
    },
    {
      id: 'billing',
      type: 'group',
      title: 'panel:menu.group.usage',
      children: [
        { id: 'invoice', type: 'item', title: 'panel:menu.log', url: '/panel/invoice', icon: FileTextIcon, siteFlag: 'UserInvoiceMonth' },
      ],
    },
  ]

  it('hides admin items from users (role < 10) and omits groups left empty', () => {
    expect(ids(visibleMenu({ role: ROLE.user }, sample))).toEqual([['setting', ['token']]])
    expect(ids(visibleMenu({ role: undefined }, sample))).toEqual([['setting', ['token']]])
  })

  it('shows admin items to administrators and root (role >= 10)', () => {
    const expected = [
      ['setting', ['channel', 'token']],
      ['admin-only', ['task']],
    ]
    expect(ids(visibleMenu({ role: ROLE.admin }, sample))).toEqual(expected)
    expect(ids(visibleMenu({ role: ROLE.root }, sample))).toEqual(expected)
  })

  it('hides items whose site flag is off', () => {
    expect(ids(visibleMenu({ role: ROLE.user, site: { UserInvoiceMonth: true } }, sample))).toContainEqual([
      'billing',
      ['invoice'],
    ])
  })

  it('finds the group and item of a path (breadcrumbs, selection)', () => {
    expect(findMenuTrail('/panel')?.item.id).toBe('dashboard')
    expect(findMenuTrail('/panel/token')?.group.id).toBe('setting')
    expect(findMenuTrail('/panel/log/')?.item.id).toBe('log')
    expect(findMenuTrail('/panel/nothing')).toBeUndefined()
  })
})

describe('role and flag menu items', () => {
  const settingIds = (role: number, menu?: MenuGroup[]) =>
    groupItems(visibleMenu({ role }, menu).find((g) => g.id === 'setting') ?? { id: '', type: 'group', title: 'panel:menu.label', children: [] }).map(
      (i) => i.id,
    )

  it('show settings to administrators (spec 2.3), never to users', () => {
    expect(settingIds(ROLE.root)).toContain('setting')
    expect(settingIds(ROLE.admin)).toContain('setting')
    expect(settingIds(ROLE.user)).not.toContain('setting')
  })

  it('show the Telegram bot to root alone, right after the settings', () => {
    expect(settingIds(ROLE.root)).toEqual([
      'user',
      'channel',
      'user_group',
      'pricing',
      'model_ownedby',
      'redemption',
      'payment',
      'token',
      'profile',
      'setting',
      'telegram',
      'guides',
      'tools',
    ])
    expect(settingIds(ROLE.admin)).not.toContain('telegram')
    expect(settingIds(ROLE.user)).not.toContain('telegram')
    expect(findMenuTrail('/panel/telegram')?.item.url).toBe('/panel/telegram')
  })

  it('show a root-only item to root alone', () => {
    const menu: MenuGroup[] = [
      {
        id: 'setting',
        type: 'group',
        title: 'panel:menu.group.setting',
        children: [{ id: 'secret', type: 'item', title: 'panel:menu.token', url: '/panel/x', icon: KeyRoundIcon, isRoot: true }],
      },
    ]
    expect(settingIds(ROLE.root, menu)).toEqual(['secret'])
    expect(settingIds(ROLE.admin, menu)).toEqual([])
  })

  it('show the monthly bill only while the site flag is on', () => {
    const usage = (flag: boolean) =>
      visibleMenu({ role: ROLE.user, site: { UserInvoiceMonth: flag } }).find((g) => g.id === 'usage')?.children.map((e) => e.id)
    expect(usage(true)).toContain('invoice')
    expect(usage(false)).not.toContain('invoice')
  })
})
