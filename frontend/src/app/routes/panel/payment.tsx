import { useTranslation } from 'react-i18next'
import { PaymentPanel } from '@/features/payment/components/payment-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function PaymentRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('payment:title')} description={t('payment:description')}>
        <PaymentPanel />
      </Screen>
    </AdminOnly>
  )
}
