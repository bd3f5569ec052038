import { useTranslation } from 'react-i18next'
import { Navigate } from 'react-router'
import { SettingsPanel } from '@/features/settings/components/settings-panel'
import { useUser } from '@/stores/session'
import { ROLE } from '@/types/api'

/** Settings: the super administrator only (administrators land on not-found, like other users). */
export default function SettingRoute() {
  const { t } = useTranslation()
  const user = useUser()
  if ((user?.role ?? 0) < ROLE.root) return <Navigate to="/panel/404" replace />
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('settings:title')}</h1>
        <p className="text-muted-foreground">{t('settings:description')}</p>
      </div>
      <SettingsPanel />
    </div>
  )
}
