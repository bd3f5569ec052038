import type { ChangeEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useNavigate, useParams } from 'react-router'
import { NativeSelect } from '@/components/ui/native-select'
import { cn } from '@/lib/utils'
import { DOCS_PAGES, docsFileUrl, docsRouteUrl, findDocsPage, type DocsSection } from '../pages'

interface DocsViewerProps {
  section: DocsSection
  /** '/panel' inside the console, '' on the public site. */
  base: string
  className?: string
}

/**
 * A documentation section (spec section 2.5): the list of its pages (a select on phones) and the
 * chosen static page in a sandboxed frame. The URL below /<section>/ selects the page.
 */
export function DocsViewer({ section, base, className }: DocsViewerProps) {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const params = useParams()
  const pages = DOCS_PAGES[section]
  const current = findDocsPage(section, params['*'])
  const title = t(current.title)

  const onSelect = (e: ChangeEvent<HTMLSelectElement>) => {
    const page = pages.find((p) => p.path === e.target.value)
    if (page) void navigate(docsRouteUrl(base, section, page))
  }

  return (
    <div className={cn('grid grid-cols-1 gap-4', className)} data-testid={`docs-${section}`}>
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t(`docs:${section}.title`)}</h1>
        <p className="text-muted-foreground">{t(`docs:${section}.description`)}</p>
      </div>
      <div className="grid grid-cols-1 gap-4 md:grid-cols-[220px_minmax(0,1fr)]">
        <div className="md:hidden">
          <label htmlFor={`docs-select-${section}`} className="sr-only">
            {t('docs:choosePage')}
          </label>
          <NativeSelect
            id={`docs-select-${section}`}
            value={current.path}
            onChange={onSelect}
            data-testid="docs-select"
          >
            {pages.map((p) => (
              <option key={p.path} value={p.path}>
                {t(p.title)}
              </option>
            ))}
          </NativeSelect>
        </div>
        <nav aria-label={t('docs:pageList')} className="hidden md:block" data-testid="docs-nav">
          <ul className="grid gap-0.5">
            {pages.map((p) => {
              const active = p.path === current.path
              return (
                <li key={p.path}>
                  <Link
                    to={docsRouteUrl(base, section, p)}
                    aria-current={active ? 'page' : undefined}
                    data-testid={`docs-link-${p.path || 'index'}`}
                    className={cn(
                      'block rounded-lg px-3 py-2 text-sm transition-colors',
                      active
                        ? 'bg-accent font-medium text-accent-foreground'
                        : 'text-muted-foreground hover:bg-muted hover:text-foreground',
                    )}
                  >
                    {t(p.title)}
                  </Link>
                </li>
              )
            })}
          </ul>
        </nav>
        <div className="flex min-w-0 flex-col gap-2">
          <iframe
            key={current.path}
            title={title}
            src={docsFileUrl(section, current)}
            sandbox="allow-same-origin allow-popups"
            className="h-[calc(100dvh-15rem)] min-h-[420px] w-full rounded-lg border bg-background"
            data-testid="docs-frame"
          />
          <a
            href={docsFileUrl(section, current)}
            target="_blank"
            rel="noreferrer"
            className="self-end text-xs text-muted-foreground hover:text-foreground hover:underline"
          >
            {t('docs:openNew')}
          </a>
        </div>
      </div>
    </div>
  )
}
