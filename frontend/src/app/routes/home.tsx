import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { Button } from '@/components/ui/button'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'

export function HomeRoute() {
  const { t } = useTranslation()
  const { system_name } = useSiteInfo()
  const user = useUser()
  return (
    <section className="mx-auto flex w-full max-w-3xl flex-1 flex-col items-center justify-center gap-6 px-4 py-16 text-center">
      <h1 className="text-3xl font-bold tracking-tight sm:text-4xl" data-testid="home-title">
        {t('common:home.welcome', { name: system_name })}
      </h1>
      <p className="max-w-xl text-muted-foreground">{t('common:home.description')}</p>
      <Button asChild size="lg">
        {user ? (
          <Link to="/panel">{t('common:home.openConsole')}</Link>
        ) : (
          <Link to="/login">{t('common:home.getStarted')}</Link>
        )}
      </Button>
    </section>
  )
}
