import { ExternalLinkIcon, TriangleAlertIcon } from 'lucide-react'
import { useEffect, useMemo } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useSearchParams } from 'react-router'
import { Button } from '@/components/ui/button'
import { Spinner } from '@/components/ui/spinner'
import { isJumpable, matchesChatLink, parseChatLinks } from '@/lib/chat-links'
import { useSiteInfo } from '@/stores/site'

/** Where the browser goes; a seam for tests (jsdom cannot navigate). */
export const jumpTo = { go: (url: string) => window.location.assign(url) }

/**
 * /jump?url=… (spec 2.1): the redirecting screen chat-client links go through, so that an
 * app's own scheme (ama://, opencat://) opens the app. It goes on by itself only to where one
 * of the site's chat links leads; any other address is shown and needs a click (no open
 * redirect); script and data URLs are refused.
 */
export default function JumpRoute() {
  const { t } = useTranslation()
  const [params] = useSearchParams()
  const { chat_links } = useSiteInfo()
  const url = params.get('url')?.trim() ?? ''
  const links = useMemo(() => parseChatLinks(chat_links, { includeHidden: true }), [chat_links])
  const allowed = url !== '' && isJumpable(url)
  const automatic = allowed && matchesChatLink(url, links)

  useEffect(() => {
    if (automatic) jumpTo.go(url)
  }, [automatic, url])

  return (
    <section className="mx-auto flex max-w-xl flex-1 flex-col items-center justify-center gap-4 px-4 py-16 text-center" data-testid="jump">
      {!allowed ? (
        <>
          <TriangleAlertIcon aria-hidden className="size-10 text-destructive" />
          <h1 className="text-xl font-semibold" data-testid="jump-refused">
            {url ? t('public:jump.refused') : t('public:jump.missing')}
          </h1>
          <Button asChild variant="outline">
            <Link to="/">{t('common:notFound.backHome')}</Link>
          </Button>
        </>
      ) : automatic ? (
        <>
          <Spinner className="size-8" />
          <h1 className="text-xl font-semibold">{t('public:jump.redirecting')}</h1>
          <p className="text-sm text-muted-foreground">{t('public:jump.notOpening')}</p>
          <Button asChild>
            <a href={url} data-testid="jump-open">
              <ExternalLinkIcon />
              {t('public:jump.open')}
            </a>
          </Button>
        </>
      ) : (
        <>
          <TriangleAlertIcon aria-hidden className="size-10 text-amber-500" />
          <h1 className="text-xl font-semibold" data-testid="jump-confirm">
            {t('public:jump.leaving')}
          </h1>
          <p className="w-full rounded-md border bg-muted/50 p-3 font-mono text-xs break-all" data-testid="jump-target">
            {url}
          </p>
          <div className="flex gap-2">
            <Button asChild variant="outline">
              <Link to="/">{t('common:actions.cancel')}</Link>
            </Button>
            <Button asChild>
              <a href={url} rel="noopener noreferrer" data-testid="jump-open">
                <ExternalLinkIcon />
                {t('public:jump.continue')}
              </a>
            </Button>
          </div>
        </>
      )}
    </section>
  )
}
