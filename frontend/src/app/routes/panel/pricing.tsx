import { useTranslation } from 'react-i18next'
import { PricingPanel } from '@/features/pricing/components/pricing-panel'
import { AdminOnly } from './admin-only'

export default function PricingRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('pricing:editor.title')}</h1>
          <p className="text-muted-foreground">{t('pricing:editor.description')}</p>
        </div>
        <PricingPanel />
      </div>
    </AdminOnly>
  )
}
