import { useTranslation } from 'react-i18next'
import { InvoicesPanel } from '@/features/invoices/components/invoices-panel'
import { useUser } from '@/stores/session'
import { ROLE } from '@/types/api'

export default function InvoiceRoute() {
  const { t } = useTranslation()
  const user = useUser()
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('invoices:title')}</h1>
        <p className="text-muted-foreground">{t('invoices:description')}</p>
      </div>
      <InvoicesPanel canGenerate={(user?.role ?? 0) >= ROLE.root} />
    </div>
  )
}
