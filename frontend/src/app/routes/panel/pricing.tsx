import { useTranslation } from 'react-i18next'
import { PricingPanel } from '@/features/pricing/components/pricing-panel'
import { AdminScreen } from './admin-only'

export default function PricingRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('pricing:editor.title')} description={t('pricing:editor.description')}><PricingPanel /></AdminScreen>
}
