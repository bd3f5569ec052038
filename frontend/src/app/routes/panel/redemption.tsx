import { useTranslation } from 'react-i18next'
import { RedemptionsPanel } from '@/features/redemptions/components/redemptions-panel'
import { AdminScreen } from './admin-only'

export default function RedemptionRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('redemptions:title')} description={t('redemptions:description')}><RedemptionsPanel /></AdminScreen>
}
