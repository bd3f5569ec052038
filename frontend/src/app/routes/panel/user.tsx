import { useTranslation } from 'react-i18next'
import { UsersPanel } from '@/features/users/components/users-panel'
import { AdminScreen } from './admin-only'

export default function UserRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('users:title')} description={t('users:description')}><UsersPanel /></AdminScreen>
}
