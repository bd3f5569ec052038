import { useTranslation } from 'react-i18next'
import { GroupsPanel } from '@/features/groups/components/groups-panel'
import { AdminScreen } from './admin-only'

export default function UserGroupRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('groups:title')} description={t('groups:description')}><GroupsPanel /></AdminScreen>
}
