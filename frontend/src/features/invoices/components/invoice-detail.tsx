import { ArrowLeftIcon, DownloadIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { ListState } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatTimestamp, renderNumber, renderQuota } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import { invoicePdfUrl, useInvoice } from '../api/get-invoices'
import { InvoiceStatusBadge } from './invoice-status-badge'
import { httpStatusOf } from '@/lib/errors'

/** One month's invoice: totals and the per-model lines. */
export function InvoiceDetail({ date }: { date: string }) {
  const { t, i18n } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const invoice = useInvoice(date)
  const inv = invoice.data
  const lines = [...(inv?.model_details ?? [])].sort((a, b) => b.quota - a.quota)

  const back = (
    <Button asChild variant="outline" size="sm">
      <Link to="/panel/invoice">
        <ArrowLeftIcon />
        {t('invoices:actions.back')}
      </Link>
    </Button>
  )

  if (invoice.isPending || !inv) {
    return (
      <div className="grid grid-cols-1 gap-4">
        <div>{back}</div>
        <Card>
          <ListState
            loading={invoice.isPending}
            // A month without an invoice is "not found"; any other failure says what went wrong.
            query={httpStatusOf(invoice.error) === 404 ? undefined : invoice}
            empty
            emptyText={t('invoices:detail.notFound', { date })}
            emptyTestId="invoice-not-found"
          >
            {null}
          </ListState>
        </Card>
      </div>
    )
  }

  const stats = [
    { id: 'amount', label: t('invoices:columns.amount'), value: renderQuota(inv.amount, display) },
    { id: 'requests', label: t('invoices:columns.requests'), value: renderNumber(inv.request_count) },
    { id: 'prompt', label: t('invoices:detail.promptTokens'), value: renderNumber(inv.prompt_tokens) },
    { id: 'completion', label: t('invoices:detail.completionTokens'), value: renderNumber(inv.completion_tokens) },
    { id: 'time', label: t('invoices:detail.requestTime'), value: t('invoices:detail.seconds', { s: (inv.request_time_ms / 1000).toFixed(1) }) },
    { id: 'created', label: t('invoices:columns.createdAt'), value: formatTimestamp(inv.created_at) },
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <div className="flex flex-wrap items-center gap-2">
        {back}
        <Button asChild size="sm" className="ml-auto">
          <a href={invoicePdfUrl(inv.date, i18n.language)} download data-testid="invoice-pdf-link">
            <DownloadIcon />
            {t('invoices:actions.pdf')}
          </a>
        </Button>
      </div>
      <Card data-testid="invoice-detail">
        <CardHeader>
          <CardTitle>
            <h2 className="flex flex-wrap items-center gap-2">
              {t('invoices:detail.title', { date: inv.date })}
              <InvoiceStatusBadge status={inv.status} />
            </h2>
          </CardTitle>
          {inv.paid_at > 0 && (
            <p className="text-sm text-muted-foreground">{t('invoices:detail.paidAt', { time: formatTimestamp(inv.paid_at) })}</p>
          )}
        </CardHeader>
        <CardContent>
          <dl className="grid grid-cols-2 gap-3 lg:grid-cols-3">
            {stats.map((s) => (
              <div key={s.id} className="rounded-lg border bg-background/50 p-3">
                <dt className="text-xs text-muted-foreground">{s.label}</dt>
                <dd className="mt-1 truncate font-semibold tabular-nums" data-testid={`invoice-${s.id}`}>
                  {s.value}
                </dd>
              </div>
            ))}
          </dl>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>
            <h3>{t('invoices:detail.models')}</h3>
          </CardTitle>
        </CardHeader>
        <CardContent className="p-0">
          <ListState loading={false} empty={lines.length === 0} emptyText={t('invoices:detail.noModels')} emptyTestId="invoice-models-empty">
            <Table cards data-testid="invoice-models">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('invoices:detail.model')}</TableHead>
                  <TableHead>{t('invoices:columns.requests')}</TableHead>
                  <TableHead>{t('invoices:detail.promptTokens')}</TableHead>
                  <TableHead>{t('invoices:detail.completionTokens')}</TableHead>
                  <TableHead>{t('invoices:columns.amount')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {lines.map((l) => (
                  <TableRow key={l.model_name} data-testid={`invoice-model-${l.model_name}`}>
                    <TableCell data-card="title" className="font-medium">{l.model_name}</TableCell>
                    <TableCell>{renderNumber(l.request_count)}</TableCell>
                    <TableCell>{renderNumber(l.prompt_tokens)}</TableCell>
                    <TableCell>{renderNumber(l.completion_tokens)}</TableCell>
                    <TableCell>{renderQuota(l.quota, display)}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>
    </div>
  )
}
