import { useTranslation } from 'react-i18next'
import { SettingsPanel } from '@/features/settings/components/settings-panel'
import { ROLE } from '@/types/api'
import { AdminScreen } from './admin-only'

/**
 * Settings: administrators (the server lists and accepts only what the caller manages; root
 * alone sees the root-only settings). Anyone else is told they lack the permission.
 */
export default function SettingRoute() {
  const { t } = useTranslation()
  return <AdminScreen min={ROLE.admin} title={t('settings:title')} description={t('settings:description')}><SettingsPanel /></AdminScreen>
}
