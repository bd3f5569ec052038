import { DownloadIcon, EyeIcon, FilePlus2Icon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { DataPagination } from '@/components/data-pagination'
import { ListState } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import { invoicePdfUrl, useInvoices } from '../api/get-invoices'
import { GenerateInvoicesDialog } from './generate-invoices-dialog'
import { InvoiceStatusBadge } from './invoice-status-badge'

/**
 * The user's monthly invoices: list with paging, detail link and PDF download; the super
 * administrator can also generate a month's invoices.
 */
export function InvoicesPanel({ canGenerate = false }: { canGenerate?: boolean }) {
  const { t, i18n } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const [params, setParams] = useState({ page: 1, size: 10 })
  const invoices = useInvoices(params)
  const rows = invoices.data?.data ?? []
  const total = invoices.data?.total_count ?? 0
  const [generating, setGenerating] = useState(false)

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
      <Card>
        <CardContent className="p-0">
          <ListState
            loading={invoices.isPending} query={invoices}
            empty={rows.length === 0}
            emptyText={invoices.isError ? t('invoices:loadFailed') : t('invoices:empty')}
            emptyTestId="invoices-empty"
          >
            <Table cards data-testid="invoices-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('invoices:columns.month')}</TableHead>
                  <TableHead>{t('invoices:columns.status')}</TableHead>
                  <TableHead>{t('invoices:columns.amount')}</TableHead>
                  <TableHead>{t('invoices:columns.requests')}</TableHead>
                  <TableHead>{t('invoices:columns.tokens')}</TableHead>
                  <TableHead>{t('invoices:columns.createdAt')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('invoices:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((inv) => (
                  <TableRow key={inv.id} data-testid={`invoice-row-${inv.date}`}>
                    <TableCell data-card="title" className="font-medium">{inv.date}</TableCell>
                    <TableCell>
                      <InvoiceStatusBadge status={inv.status} />
                    </TableCell>
                    <TableCell data-testid="invoice-amount">{renderQuota(inv.amount, display)}</TableCell>
                    <TableCell>{renderNumber(inv.request_count)}</TableCell>
                    <TableCell>{renderNumber(inv.total_tokens)}</TableCell>
                    <TableCell className="whitespace-nowrap">{formatTimestamp(inv.created_at)}</TableCell>
                    <TableCell data-card="actions">
                      <div className="flex justify-end gap-1">
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
                      </div>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>
      {total > 0 && (
        <DataPagination
          page={params.page}
          size={params.size}
          total={total}
          onPageChange={(page) => setParams((p) => ({ ...p, page }))}
          onSizeChange={(size) => setParams({ size, page: 1 })}
        />
      )}
      <p className="text-xs text-muted-foreground">{t('invoices:note')}</p>
      {canGenerate && <GenerateInvoicesDialog open={generating} onOpenChange={setGenerating} />}
    </div>
  )
}
