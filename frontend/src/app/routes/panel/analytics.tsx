import { useTranslation } from 'react-i18next'
import { AnalyticsPanel } from '@/features/analytics/components/analytics-panel'
import { AdminOnly } from './admin-only'

export default function AnalyticsRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('analytics:title')}</h1>
          <p className="text-muted-foreground">{t('analytics:description')}</p>
        </div>
        <AnalyticsPanel />
      </div>
    </AdminOnly>
  )
}
