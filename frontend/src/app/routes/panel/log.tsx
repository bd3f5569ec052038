import { useTranslation } from 'react-i18next'
import { LogsPanel } from '@/features/logs/components/logs-panel'
import { isAdmin } from '@/lib/roles'
import { useUser } from '@/stores/session'
import { Screen } from '@/components/screen'

export default function LogRoute() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <Screen title={t('logs:title')} description={t('logs:description')}>
      <LogsPanel admin={isAdmin(user.role)} />
    </Screen>
  )
}
