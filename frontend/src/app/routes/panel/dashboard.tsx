import { useTranslation } from 'react-i18next'
import { AccountCard } from '@/features/dashboard/components/account-card'
import { useUser } from '@/stores/session'

export default function DashboardRoute() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <div className="grid gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('panel:dashboard.title')}</h1>
        <p className="text-muted-foreground">
          {t('panel:dashboard.welcome', { name: user.display_name || user.username })}
        </p>
      </div>
      <AccountCard user={user} />
    </div>
  )
}
