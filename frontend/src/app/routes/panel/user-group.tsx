import { useTranslation } from 'react-i18next'
import { GroupsPanel } from '@/features/groups/components/groups-panel'
import { AdminOnly } from './admin-only'

export default function UserGroupRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('groups:title')}</h1>
          <p className="text-muted-foreground">{t('groups:description')}</p>
        </div>
        <GroupsPanel />
      </div>
    </AdminOnly>
  )
}
