import { useTranslation } from 'react-i18next'
import { GroupsPanel } from '@/features/groups/components/groups-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function UserGroupRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('groups:title')} description={t('groups:description')}>
        <GroupsPanel />
      </Screen>
    </AdminOnly>
  )
}
