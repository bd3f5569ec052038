import { ExternalLinkIcon } from 'lucide-react'
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
import { usePublicLinks } from './public-links'
import { PublicMobileMenu } from './public-mobile-menu'

const navLinkClass = ({ isActive }: { isActive: boolean }) =>
  cn(
    'whitespace-nowrap rounded-md px-3 py-2 text-sm font-medium transition-colors hover:bg-accent hover:text-accent-foreground',
    isActive ? 'text-foreground' : 'text-muted-foreground',
  )

export function PublicLayout() {
  const { t } = useTranslation()
  const user = useUser()
  const { system_name, footer_html } = useSiteInfo()
  const links = usePublicLinks()

  return (
    <div className="flex min-h-dvh flex-col">
      <header className="sticky top-0 z-40 border-b bg-background/85 backdrop-blur">
        <div className="mx-auto flex h-14 max-w-6xl items-center gap-2 px-4 sm:h-16">
          <Brand to="/" />
          <PublicMobileMenu links={links} />
          <nav aria-label={t('common:nav.mainNavigation')} className="ml-4 hidden items-center gap-1 sm:flex">
            {links
              .filter((l) => !l.mobileOnly)
              .map((l) =>
                l.external ? (
                  <a
                    key={l.id}
                    href={l.to}
                    target="_blank"
                    rel="noopener noreferrer"
                    className={cn(navLinkClass({ isActive: false }), 'inline-flex items-center gap-1')}
                    data-testid={`nav-${l.id}`}
                  >
                    {l.label}
                    <ExternalLinkIcon aria-hidden className="size-3.5" />
                  </a>
                ) : (
                  <NavLink key={l.id} to={l.to} end={l.to === '/'} className={navLinkClass} data-testid={`nav-${l.id}`}>
                    {l.label}
                  </NavLink>
                ),
              )}
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

      {footer_html.trim() ? (
        // The operator's own footer (option Footer): HTML they wrote, as the server serves it,
        // cleaned to an allow-list like the notice (docs/security.md).
        <footer
          className="border-t py-6 text-center text-sm text-muted-foreground [&_a]:underline"
          data-testid="footer"
          dangerouslySetInnerHTML={{ __html: footer_html }}
        />
      ) : (
        <footer className="border-t px-4 py-6 text-center text-sm text-muted-foreground" data-testid="footer">
          <p>
            <span>{system_name}</span>
            <span className="mx-2" aria-hidden>
              ·
            </span>
            <span>{t('common:footer.version', { version: APP_VERSION })}</span>
          </p>
          <p className="mt-1 text-xs" data-testid="footer-credits">
            {t('common:footer.credits')}
            <span className="mx-2" aria-hidden>
              ·
            </span>
            <a
              href="https://opensource.org/license/mit"
              target="_blank"
              rel="noopener noreferrer"
              className="underline-offset-4 hover:underline"
              data-testid="footer-license"
            >
              {t('common:footer.license')}
            </a>
          </p>
        </footer>
      )}
    </div>
  )
}
