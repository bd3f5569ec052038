import { useTranslation } from 'react-i18next'
import { RedemptionsPanel } from '@/features/redemptions/components/redemptions-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function RedemptionRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('redemptions:title')} description={t('redemptions:description')}>
        <RedemptionsPanel />
      </Screen>
    </AdminOnly>
  )
}
