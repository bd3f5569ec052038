import { useTranslation } from 'react-i18next'
import { useParams } from 'react-router'
import { InvoiceDetail } from '@/features/invoices/components/invoice-detail'
import { Screen } from '@/components/screen'

export default function InvoiceDetailRoute() {
  const { t } = useTranslation()
  const { date = '' } = useParams()
  return (
    <Screen title={t('invoices:title')} description={t('invoices:description')}>
      <InvoiceDetail key={date} date={date} />
    </Screen>
  )
}
