import { http, HttpResponse } from 'msw'
import type { Invoice } from '../types'

export function mockInvoice(overrides: Partial<Invoice> = {}): Invoice {
  return {
    id: 1,
    user_id: 1,
    month: '2024-12',
    date: '2024-12',
    status: 1,
    amount: 1_000_000,
    quota: 1_000_000,
    request_count: 120,
    prompt_tokens: 50_000,
    completion_tokens: 10_000,
    total_tokens: 60_000,
    request_time_ms: 90_000,
    created_at: 1_735_689_600,
    paid_at: 0,
    ...overrides,
  }
}

let invoices: Invoice[] = []

export function resetInvoiceMocks(initial: Invoice[] = []): void {
  invoices = initial.map((i) => ({ ...i }))
}

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data })

export const invoicesHandlers = [
  http.get('*/api/user/invoice', ({ request }) => {
    const url = new URL(request.url)
    const page = Number(url.searchParams.get('page') ?? 1)
    const size = Number(url.searchParams.get('size') ?? 10)
    return ok({ data: invoices.slice((page - 1) * size, page * size), page, size, total_count: invoices.length })
  }),
  http.get('*/api/user/invoice/detail', ({ request }) => {
    const date = new URL(request.url).searchParams.get('date') ?? ''
    const found = invoices.find((i) => i.date === date)
    if (!found) {
      return HttpResponse.json(
        { success: false, message: `no invoice for "${date}" (months are written YYYY-MM)`, code: 'not_found' },
        { status: 404 },
      )
    }
    return ok({
      ...found,
      model_details: found.model_details ?? [
        { model_name: 'gpt-4o-mini', request_count: 100, quota: 600_000, prompt_tokens: 40_000, completion_tokens: 8_000, request_time_ms: 60_000 },
        { model_name: 'claude-3-5-haiku', request_count: 20, quota: 400_000, prompt_tokens: 10_000, completion_tokens: 2_000, request_time_ms: 30_000 },
      ],
    })
  }),
]
