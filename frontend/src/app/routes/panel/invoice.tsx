import { useTranslation } from 'react-i18next'
import { InvoicesPanel } from '@/features/invoices/components/invoices-panel'
import { useUser } from '@/stores/session'
import { ROLE } from '@/types/api'
import { Screen } from '@/components/screen'

export default function InvoiceRoute() {
  const { t } = useTranslation()
  const user = useUser()
  return (
    <Screen title={t('invoices:title')} description={t('invoices:description')}>
      <InvoicesPanel canGenerate={(user?.role ?? 0) >= ROLE.root} />
    </Screen>
  )
}
