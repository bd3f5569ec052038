import { Suspense } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, NavLink, Outlet } from 'react-router'
import { FullPageSpinner } from '@/components/full-page-spinner'
import { LanguageSwitcher } from '@/components/language-switcher'
import { ThemeToggle } from '@/components/theme-toggle'
import { Button } from '@/components/ui/button'
import { cn } from '@/lib/utils'
import { useUser } from '@/stores/session'
import { Brand } from './brand'

const tabClass = ({ isActive }: { isActive: boolean }) =>
  cn(
    'whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium transition-colors hover:bg-accent hover:text-accent-foreground',
    isActive ? 'bg-accent text-foreground' : 'text-muted-foreground',
  )

/**
 * The docs layout (spec 2.5, under /docs): a slim bar with the two sections, theme, language
 * and the way back (console or login); the pages fill the width below it.
 */
export function DocsLayout() {
  const { t } = useTranslation()
  const user = useUser()
  return (
    <div className="flex min-h-dvh flex-col" data-testid="docs-layout">
      <header className="sticky top-0 z-40 border-b bg-background/85 backdrop-blur">
        <div className="flex h-14 items-center gap-2 px-4">
          <Brand to="/" />
          <nav aria-label={t('docs:nav.sections')} className="ml-2 flex items-center gap-1 sm:ml-4">
            <NavLink to="/docs/guides" className={tabClass} data-testid="docs-tab-guides">
              {t('docs:nav.guides')}
            </NavLink>
            <NavLink to="/docs/tools" className={tabClass} data-testid="docs-tab-tools">
              {t('docs:nav.tools')}
            </NavLink>
          </nav>
          <div className="ml-auto flex items-center gap-1">
            <ThemeToggle />
            <LanguageSwitcher />
            <Button asChild size="sm" variant="outline" className="ml-1 hidden sm:inline-flex">
              <Link to={user ? '/panel' : '/login'}>{user ? t('common:nav.console') : t('common:nav.login')}</Link>
            </Button>
          </div>
        </div>
      </header>
      <main className="flex flex-1 flex-col px-4 py-6">
        <Suspense fallback={<FullPageSpinner />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  )
}
