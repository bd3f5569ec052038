import { useTranslation } from 'react-i18next'
import { UsersPanel } from '@/features/users/components/users-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function UserRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('users:title')} description={t('users:description')}>
        <UsersPanel />
      </Screen>
    </AdminOnly>
  )
}
