import { useTranslation } from 'react-i18next'
import { isAdmin } from '@/lib/roles'
import { useUser } from '@/stores/session'
import { MidjourneyPanel } from './midjourney-panel'

/** /panel/midjourney: administrators see every task, anyone else their own (like the log screen). */
export default function MidjourneyScreen() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('tasks:mj.title')}</h1>
        <p className="text-muted-foreground">{t('tasks:mj.description')}</p>
      </div>
      <MidjourneyPanel admin={isAdmin(user.role)} />
    </div>
  )
}
