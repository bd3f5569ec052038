import { useTranslation } from 'react-i18next'
import { Spinner } from '@/components/ui/spinner'
import { APP_VERSION } from '@/config'
import { useAbout } from '@/features/site/api/get-about'
import { useSiteInfo } from '@/stores/site'

/** About: the operator's text (HTML), a page in a frame when it is a URL, else a default. */
export default function AboutRoute() {
  const { t } = useTranslation()
  const { system_name } = useSiteInfo()
  const about = useAbout()
  const content = (about.data ?? '').trim()

  if (about.isPending) {
    return (
      <div className="flex flex-1 items-center justify-center p-10" role="status" aria-label={t('common:state.loading')}>
        <Spinner className="size-6" />
      </div>
    )
  }
  // A single web address is framed (the server keeps only http(s) addresses as they are).
  if (/^https?:\/\/\S+$/.test(content)) {
    return <iframe src={content} title={t('public:about.title')} className="w-full flex-1 border-0" style={{ minHeight: '80dvh' }} data-testid="about-frame" />
  }
  return (
    <section className="mx-auto grid w-full max-w-3xl gap-4 px-4 py-10">
      <h1 className="text-2xl font-semibold tracking-tight sm:text-3xl">{t('public:about.title')}</h1>
      {content ? (
        // Written by an administrator in the settings; the server serves it cleaned to an
        // allow-list (no script, meta, frames; links only http(s) and mailto), as the notice.
        <div className="text-sm leading-7 [&_a]:text-primary [&_a]:underline [&_h2]:mt-4 [&_h2]:text-lg [&_h2]:font-semibold [&_p]:my-2" dangerouslySetInnerHTML={{ __html: content }} data-testid="about-content" />
      ) : (
        <div className="grid gap-2 text-muted-foreground" data-testid="about-default">
          <p>{t('public:about.default', { name: system_name })}</p>
          <p>{t('public:about.version', { version: APP_VERSION })}</p>
          <p>{t('public:about.hint')}</p>
        </div>
      )}
    </section>
  )
}
