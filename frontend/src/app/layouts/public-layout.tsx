import { Suspense } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, NavLink, Outlet } from 'react-router'
import { FullPageSpinner } from '@/components/full-page-spinner'
import { LanguageSwitcher } from '@/components/language-switcher'
import { ThemeToggle } from '@/components/theme-toggle'
import { Button } from '@/components/ui/button'
import { APP_VERSION } from '@/config'
import { cn } from '@/lib/utils'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import { Brand } from './brand'
import { PublicMobileMenu } from './public-mobile-menu'

const navLinkClass = ({ isActive }: { isActive: boolean }) =>
  cn(
    'whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium transition-colors hover:bg-accent hover:text-accent-foreground',
    isActive ? 'text-foreground' : 'text-muted-foreground',
  )

export function PublicLayout() {
  const { t } = useTranslation()
  const user = useUser()
  const { system_name } = useSiteInfo()

  return (
    <div className="flex min-h-dvh flex-col">
      <header className="sticky top-0 z-40 border-b bg-background/85 backdrop-blur">
        <div className="mx-auto flex h-14 max-w-6xl items-center gap-2 px-4 sm:h-16">
          <Brand to="/" />
          <PublicMobileMenu />
          <nav aria-label={t('common:nav.mainNavigation')} className="ml-4 hidden items-center gap-1 sm:flex">
            <NavLink to="/" end className={navLinkClass}>
              {t('common:nav.home')}
            </NavLink>
            <NavLink to="/price" className={navLinkClass} data-testid="nav-price">
              {t('public:nav.price')}
            </NavLink>
            <NavLink to="/guides" className={navLinkClass} data-testid="nav-guides">
              {t('docs:nav.guides')}
            </NavLink>
            <NavLink to="/tools" className={navLinkClass} data-testid="nav-tools">
              {t('docs:nav.tools')}
            </NavLink>
          </nav>
          <div className="ml-auto flex items-center gap-1">
            <ThemeToggle />
            <LanguageSwitcher />
            {user ? (
              <Button asChild size="sm" className="ml-1" data-testid="console-link">
                <Link to="/panel">{t('common:nav.console')}</Link>
              </Button>
            ) : (
              <Button asChild size="sm" className="ml-1" data-testid="login-link">
                <Link to="/login">{t('common:nav.login')}</Link>
              </Button>
            )}
          </div>
        </div>
      </header>

      <main className="flex flex-1 flex-col">
        <Suspense fallback={<FullPageSpinner />}>
          <Outlet />
        </Suspense>
      </main>

      <footer className="border-t py-6 text-center text-sm text-muted-foreground" data-testid="footer">
        <span>{system_name}</span>
        <span className="mx-2" aria-hidden>
          ·
        </span>
        <span>{t('common:footer.version', { version: APP_VERSION })}</span>
      </footer>
    </div>
  )
}
