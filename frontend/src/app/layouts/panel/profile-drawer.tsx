import { HomeIcon, LayoutDashboardIcon, UserRoundIcon, WalletIcon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { Button } from '@/components/ui/button'
import { Sheet, SheetContent, SheetDescription, SheetTitle } from '@/components/ui/sheet'
import { SignOutButton } from '@/features/auth/components/sign-out-button'
import { roleKey } from '@/lib/roles'
import { useUserGroups } from '@/stores/session'
import type { User } from '@/types/api'
import { UserAvatar } from './user-avatar'

/** Avatar button in the header; opens the right-hand profile drawer (spec section 2.4). */
export function ProfileDrawer({ user }: { user: User }) {
  const { t } = useTranslation()
  const [open, setOpen] = useState(false)
  const close = () => setOpen(false)
  const group = useUserGroups()?.[user.group]
  return (
    <>
      <Button
        variant="ghost"
        size="icon"
        className="rounded-full"
        aria-label={t('panel:profile.open')}
        title={t('panel:profile.open')}
        onClick={() => setOpen(true)}
        data-testid="profile-avatar"
      >
        <UserAvatar user={user} />
      </Button>
      <Sheet open={open} onOpenChange={setOpen}>
        <SheetContent side="right" className="w-[280px] gap-4 p-5" data-testid="profile-drawer">
          <div className="flex items-center gap-3">
            <UserAvatar user={user} className="size-11 text-base" />
            <div className="min-w-0">
              <SheetTitle className="truncate font-semibold">{user.display_name || user.username}</SheetTitle>
              <SheetDescription className="text-sm text-muted-foreground">
                {t(`common:role.${roleKey(user.role)}`)}
              </SheetDescription>
              {group && (
                <p className="truncate text-xs text-muted-foreground" data-testid="profile-group">
                  {t('panel:profile.group', { name: group.name || user.group, ratio: group.ratio })}
                </p>
              )}
            </div>
          </div>
          <nav className="grid gap-1" aria-label={t('panel:profile.links')}>
            <Button asChild variant="ghost" className="justify-start" onClick={close}>
              <Link to="/" data-testid="profile-home">
                <HomeIcon />
                {t('common:nav.home')}
              </Link>
            </Button>
            <Button asChild variant="ghost" className="justify-start" onClick={close}>
              <Link to="/panel/dashboard" data-testid="profile-dashboard">
                <LayoutDashboardIcon />
                {t('panel:menu.dashboard')}
              </Link>
            </Button>
            <Button asChild variant="ghost" className="justify-start" onClick={close}>
              <Link to="/panel/profile" data-testid="profile-profile">
                <UserRoundIcon />
                {t('profile:menu')}
              </Link>
            </Button>
          </nav>
          <Button asChild onClick={close}>
            <Link to="/panel/topup" data-testid="profile-topup">
              <WalletIcon />
              {t('panel:profile.topup')}
            </Link>
          </Button>
          <div className="mt-auto">
            <SignOutButton className="w-full" />
          </div>
        </SheetContent>
      </Sheet>
    </>
  )
}
