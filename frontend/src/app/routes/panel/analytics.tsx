import { useTranslation } from 'react-i18next'
import { AnalyticsPanel } from '@/features/analytics/components/analytics-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function AnalyticsRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('analytics:title')} description={t('analytics:description')}>
        <AnalyticsPanel />
      </Screen>
    </AdminOnly>
  )
}
