export interface InvoiceListParams {
  page: number
  size: number
}

export const invoiceKeys = {
  all: ['invoices'] as const,
  lists: () => [...invoiceKeys.all, 'list'] as const,
  list: (params: InvoiceListParams) => [...invoiceKeys.lists(), params] as const,
  detail: (date: string) => [...invoiceKeys.all, 'detail', date] as const,
}
