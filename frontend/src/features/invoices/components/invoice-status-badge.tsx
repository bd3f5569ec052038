import { useTranslation } from 'react-i18next'
import { Badge } from '@/components/ui/badge'
import { INVOICE_STATUS } from '../types'

/**
 * Paid (every invoice Switchboard writes: balances are prepaid, the charges left the balance
 * as the calls were settled), or unpaid for rows written by earlier versions, which says so.
 */
export function InvoiceStatusBadge({ status }: { status: number }) {
  const { t } = useTranslation()
  return status === INVOICE_STATUS.paid ? (
    <Badge variant="success" data-testid="invoice-status">
      {t('invoices:status.paid')}
    </Badge>
  ) : (
    <Badge variant="warning" data-testid="invoice-status" title={t('invoices:status.unpaidHint')}>
      {t('invoices:status.unpaid')}
    </Badge>
  )
}
