import { useTranslation } from 'react-i18next'
import { SettingsPanel } from '@/features/settings/components/settings-panel'
import { ROLE } from '@/types/api'
import { AdminOnly } from './admin-only'

/**
 * Settings: administrators (the server lists and accepts only what the caller manages; root
 * alone sees the root-only settings). Anyone else is told they lack the permission.
 */
export default function SettingRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly min={ROLE.admin}>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('settings:title')}</h1>
          <p className="text-muted-foreground">{t('settings:description')}</p>
        </div>
        <SettingsPanel />
      </div>
    </AdminOnly>
  )
}
