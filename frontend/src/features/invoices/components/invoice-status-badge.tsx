import { useTranslation } from 'react-i18next'
import { Badge } from '@/components/ui/badge'
import { INVOICE_STATUS } from '../types'

export function InvoiceStatusBadge({ status }: { status: number }) {
  const { t } = useTranslation()
  return status === INVOICE_STATUS.paid ? (
    <Badge variant="success" data-testid="invoice-status">
      {t('invoices:status.paid')}
    </Badge>
  ) : (
    <Badge variant="warning" data-testid="invoice-status">
      {t('invoices:status.unpaid')}
    </Badge>
  )
}
