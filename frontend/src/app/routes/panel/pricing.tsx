import { useTranslation } from 'react-i18next'
import { PricingPanel } from '@/features/pricing/components/pricing-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function PricingRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('pricing:editor.title')} description={t('pricing:editor.description')}>
        <PricingPanel />
      </Screen>
    </AdminOnly>
  )
}
