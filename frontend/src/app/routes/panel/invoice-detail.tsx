import { useTranslation } from 'react-i18next'
import { useParams } from 'react-router'
import { InvoiceDetail } from '@/features/invoices/components/invoice-detail'

export default function InvoiceDetailRoute() {
  const { t } = useTranslation()
  const { date = '' } = useParams()
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('invoices:title')}</h1>
        <p className="text-muted-foreground">{t('invoices:description')}</p>
      </div>
      <InvoiceDetail key={date} date={date} />
    </div>
  )
}
