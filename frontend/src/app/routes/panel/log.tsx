import { useTranslation } from 'react-i18next'
import { LogsPanel } from '@/features/logs/components/logs-panel'
import { isAdmin } from '@/lib/roles'
import { useUser } from '@/stores/session'

export default function LogRoute() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('logs:title')}</h1>
        <p className="text-muted-foreground">{t('logs:description')}</p>
      </div>
      <LogsPanel admin={isAdmin(user.role)} />
    </div>
  )
}
