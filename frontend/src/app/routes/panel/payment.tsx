import { useTranslation } from 'react-i18next'
import { PaymentPanel } from '@/features/payment/components/payment-panel'
import { AdminScreen } from './admin-only'

export default function PaymentRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('payment:title')} description={t('payment:description')}><PaymentPanel /></AdminScreen>
}
