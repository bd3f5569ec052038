import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { Button } from '@/components/ui/button'

export function NotFoundRoute() {
  const { t } = useTranslation()
  return (
    <section className="flex flex-1 flex-col items-center justify-center gap-4 px-4 py-16 text-center">
      <p className="text-6xl font-bold text-muted-foreground/60">404</p>
      <h1 className="text-2xl font-semibold" data-testid="not-found-title">
        {t('common:notFound.title')}
      </h1>
      <p className="text-muted-foreground">{t('common:notFound.description')}</p>
      <Button asChild variant="outline">
        <Link to="/">{t('common:notFound.backHome')}</Link>
      </Button>
    </section>
  )
}
