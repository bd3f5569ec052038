import { useTranslation } from 'react-i18next'
import { OwnersPanel } from '@/features/owners/components/owners-panel'
import { AdminScreen } from './admin-only'

export default function ModelOwnedbyRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('owners:title')} description={t('owners:description')}><OwnersPanel /></AdminScreen>
}
