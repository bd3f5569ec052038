import { DownloadIcon, EyeIcon, FilePlus2Icon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { Button } from '@/components/ui/button'
import { useListScreen } from '@/hooks/use-list-screen'
import { formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { useQuotaDisplay } from '@/stores/site'
import { invoicePdfUrl, useInvoices } from '../api/get-invoices'
import type { Invoice } from '../types'
import { GenerateInvoicesDialog } from './generate-invoices-dialog'
import { InvoiceStatusBadge } from './invoice-status-badge'

const FILTERS = {}

/**
 * The user's monthly invoices: list with paging, detail link and PDF download; the super
 * administrator can also generate a month's invoices.
 */
export function InvoicesPanel({ canGenerate = false }: { canGenerate?: boolean }) {
  const { t, i18n } = useTranslation()
  const display = useQuotaDisplay()
  const list = useListScreen<Invoice>({ filters: FILTERS })
  const invoices = useInvoices(list.params)
  const [generating, setGenerating] = useState(false)

  const columns: Column<Invoice>[] = [
    { id: 'month', header: t('invoices:columns.month'), card: 'title', essential: true, className: 'font-medium', cell: (inv) => inv.date },
    { id: 'status', header: t('invoices:columns.status'), cell: (inv) => <InvoiceStatusBadge status={inv.status} /> },
    { id: 'amount', header: t('invoices:columns.amount'), testId: 'invoice-amount', cell: (inv) => renderQuota(inv.amount, display) },
    { id: 'requests', header: t('invoices:columns.requests'), cell: (inv) => renderNumber(inv.request_count) },
    { id: 'tokens', header: t('invoices:columns.tokens'), cell: (inv) => renderNumber(inv.total_tokens) },
    { id: 'created', header: t('invoices:columns.createdAt'), className: 'whitespace-nowrap', cell: (inv) => formatTimestamp(inv.created_at) },
    actionsColumn(t('invoices:columns.actions'), (inv) => (
      <>
        <Button asChild variant="ghost" size="sm">
          <Link to={`/panel/invoice/detail/${inv.date}`} data-testid="invoice-detail-link">
            <EyeIcon />
            {t('invoices:actions.detail')}
          </Link>
        </Button>
        <Button asChild variant="ghost" size="sm">
          <a href={invoicePdfUrl(inv.date, i18n.language)} download data-testid="invoice-pdf-link">
            <DownloadIcon />
            PDF
          </a>
        </Button>
      </>
    )),
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      {canGenerate && (
        <div className="flex justify-end">
          <Button variant="outline" onClick={() => setGenerating(true)} data-testid="invoice-generate">
            <FilePlus2Icon />
            {t('invoices:generate.open')}
          </Button>
        </div>
      )}
      <DataTable
        name="invoice"
        columns={columns}
        query={invoices}
        list={list}
        rowKey={(inv) => inv.date}
        emptyText={invoices.isError ? t('invoices:loadFailed') : t('invoices:empty')}
      />
      <p className="text-xs text-muted-foreground">{t('invoices:note')}</p>
      {canGenerate && <GenerateInvoicesDialog open={generating} onOpenChange={setGenerating} />}
    </div>
  )
}
