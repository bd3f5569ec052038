import { useTranslation } from 'react-i18next'
import { UsersPanel } from '@/features/users/components/users-panel'
import { AdminOnly } from './admin-only'

export default function UserRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('users:title')}</h1>
          <p className="text-muted-foreground">{t('users:description')}</p>
        </div>
        <UsersPanel />
      </div>
    </AdminOnly>
  )
}
