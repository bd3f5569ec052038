import { useTranslation } from 'react-i18next'
import { isAdmin } from '@/lib/roles'
import { useUser } from '@/stores/session'
import { MidjourneyPanel } from './midjourney-panel'
import { Screen } from '@/components/screen'

/** /panel/midjourney: administrators see every task, anyone else their own (like the log screen). */
export default function MidjourneyScreen() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <Screen title={t('tasks:mj.title')} description={t('tasks:mj.description')}>
      <MidjourneyPanel admin={isAdmin(user.role)} />
    </Screen>
  )
}
