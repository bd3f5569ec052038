export const INVOICE_STATUS = { unpaid: 1, paid: 2 } as const

/** One model's usage in a month. */
export interface InvoiceModelLine {
  model_name: string
  request_count: number
  quota: number
  prompt_tokens: number
  completion_tokens: number
  request_time_ms: number
}

/** A monthly invoice (`date` = `month` = YYYY-MM; `amount` = `quota`). */
export interface Invoice {
  id: number
  user_id: number
  month: string
  date: string
  status: number
  amount: number
  quota: number
  request_count: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  request_time_ms: number
  created_at: number
  paid_at: number
  /** Only in the detail answer. */
  model_details?: InvoiceModelLine[]
}
