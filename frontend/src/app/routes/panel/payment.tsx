import { useTranslation } from 'react-i18next'
import { PaymentPanel } from '@/features/payment/components/payment-panel'
import { AdminOnly } from './admin-only'

export default function PaymentRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('payment:title')}</h1>
          <p className="text-muted-foreground">{t('payment:description')}</p>
        </div>
        <PaymentPanel />
      </div>
    </AdminOnly>
  )
}
