import { useTranslation } from 'react-i18next'
import { RedemptionsPanel } from '@/features/redemptions/components/redemptions-panel'
import { AdminOnly } from './admin-only'

export default function RedemptionRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('redemptions:title')}</h1>
          <p className="text-muted-foreground">{t('redemptions:description')}</p>
        </div>
        <RedemptionsPanel />
      </div>
    </AdminOnly>
  )
}
