import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { Invoice } from '../types'
import { invoiceKeys, type InvoiceListParams } from './keys'

export function getInvoices(params: InvoiceListParams, signal?: AbortSignal): Promise<Page<Invoice>> {
  return api.get<Page<Invoice>>('/api/user/invoice', { query: { page: params.page, size: params.size }, signal })
}

/** GET /api/user/invoice: the user's monthly invoices, newest month first. */
export function useInvoices(params: InvoiceListParams) {
  return useQuery(
    queryOptions({
      queryKey: invoiceKeys.list(params),
      queryFn: ({ signal }) => getInvoices(params, signal),
      placeholderData: keepPreviousData,
    }),
  )
}

export function getInvoice(date: string, signal?: AbortSignal): Promise<Invoice> {
  return api.get<Invoice>('/api/user/invoice/detail', { query: { date }, signal })
}

/** GET /api/user/invoice/detail?date=YYYY-MM: one invoice with its per-model lines. */
export function useInvoice(date: string) {
  return useQuery(queryOptions({ queryKey: invoiceKeys.detail(date), queryFn: ({ signal }) => getInvoice(date, signal) }))
}

/**
 * Where the PDF of a month downloads from (same origin; the session cookie authorises it), in
 * the console's language.
 */
export function invoicePdfUrl(date: string, lang: string): string {
  return `/api/user/invoice/pdf?date=${encodeURIComponent(date)}&lang=${encodeURIComponent(lang)}`
}
