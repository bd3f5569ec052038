import { useTranslation } from 'react-i18next'
import { AnalyticsPanel } from '@/features/analytics/components/analytics-panel'
import { AdminScreen } from './admin-only'

export default function AnalyticsRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('analytics:title')} description={t('analytics:description')}><AnalyticsPanel /></AdminScreen>
}
