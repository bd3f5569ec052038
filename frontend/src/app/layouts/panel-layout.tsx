import { MenuIcon } from 'lucide-react'
import { NoticeButton } from '@/features/notice/components/notice-button'
import { Suspense, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Outlet } from 'react-router'
import { FullPageSpinner } from '@/components/full-page-spinner'
import { LanguageSwitcher } from '@/components/language-switcher'
import { ThemeToggle } from '@/components/theme-toggle'
import { Button } from '@/components/ui/button'
import { Sheet, SheetContent, SheetTitle } from '@/components/ui/sheet'
import { useMediaQuery } from '@/hooks/use-media-query'
import { cn } from '@/lib/utils'
import { useUser } from '@/stores/session'
import { Brand } from './brand'
import { Breadcrumbs } from './panel/breadcrumbs'
import { ProfileDrawer } from './panel/profile-drawer'
import { SidebarNav } from './panel/sidebar-nav'

/** md breakpoint of the console (spec section 9): from here on the sidebar is persistent. */
const DESKTOP_QUERY = '(min-width: 960px)'

/**
 * Console shell (spec sections 2.2-2.4): top bar (64px, 56px on small screens), a 260px sidebar
 * that stays open on desktop and is a temporary drawer below 960px, breadcrumbs, profile drawer.
 */
export default function PanelLayout() {
  const { t } = useTranslation()
  const user = useUser()
  const isDesktop = useMediaQuery(DESKTOP_QUERY)
  const [desktopOpen, setDesktopOpen] = useState(true)
  const [drawerOpen, setDrawerOpen] = useState(false)
  const sidebarOpen = isDesktop ? desktopOpen : drawerOpen

  const toggleSidebar = () => (isDesktop ? setDesktopOpen((o) => !o) : setDrawerOpen((o) => !o))

  return (
    <div className="flex min-h-dvh flex-col bg-background">
      <header className="sticky top-0 z-40 border-b bg-background/90 backdrop-blur">
        <div className="flex h-14 items-center gap-2 px-3 sm:h-16 sm:px-4">
          <div className="flex w-auto items-center gap-2 md:w-[236px]">
            <Brand to="/panel" />
          </div>
          <Button
            variant="ghost"
            size="icon"
            onClick={toggleSidebar}
            aria-label={t('panel:menu.toggle')}
            title={t('panel:menu.toggle')}
            aria-expanded={sidebarOpen}
            data-testid="sidebar-toggle"
          >
            <MenuIcon />
          </Button>
          <div className="ml-auto flex items-center gap-1">
            <NoticeButton />
            <ThemeToggle />
            <LanguageSwitcher />
            {user && <ProfileDrawer user={user} />}
          </div>
        </div>
      </header>

      <div className="flex flex-1">
        {isDesktop ? (
          <aside
            className={cn(
              'sticky top-16 h-[calc(100dvh-4rem)] w-[260px] shrink-0 border-r bg-background',
              !desktopOpen && 'hidden',
            )}
            data-testid="sidebar"
          >
            <SidebarNav />
          </aside>
        ) : (
          <Sheet open={drawerOpen} onOpenChange={setDrawerOpen}>
            <SheetContent side="left" className="w-[260px]" data-testid="sidebar">
              <SheetTitle className="sr-only">{t('panel:menu.label')}</SheetTitle>
              <div className="flex h-14 items-center border-b px-4">
                <Brand to="/panel" />
              </div>
              <SidebarNav onNavigate={() => setDrawerOpen(false)} />
            </SheetContent>
          </Sheet>
        )}
        <main className="min-w-0 flex-1 p-4 sm:p-6">
          <div className="mx-auto w-full max-w-7xl">
            <Breadcrumbs />
            <Suspense fallback={<FullPageSpinner />}>
              <Outlet />
            </Suspense>
          </div>
        </main>
      </div>
    </div>
  )
}
