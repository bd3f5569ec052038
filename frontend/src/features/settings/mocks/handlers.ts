import { http, HttpResponse } from 'msw'
import type { OptionItem } from '../types'

export const mockOptions = (): OptionItem[] => [
  { key: 'QuotaPerUnit', value: '500000', root_only: true },
  { key: 'QuotaForNewUser', value: '250000' },
  { key: 'Language', value: 'zh_CN' },
  { key: 'DisplayInCurrencyEnabled', value: 'true' },
  { key: 'ChatLinks', value: '[{"name":"NextChat","url":"https://app.nextchat.dev/#/?settings={\\"key\\":\\"{key}\\"}","show":true,"sort":1}]' },
  { key: 'RetryTimes', value: '0' },
  { key: 'SystemName', value: 'Switchboard' },
  { key: 'ServerAddress', value: '', root_only: true },
  { key: 'SMTPToken', value: '', secret: true, set: true, root_only: true },
  { key: 'GitHubClientSecret', value: '', secret: true, set: false, root_only: true },
  { key: 'TelegramBotToken', value: '', secret: true, set: true, root_only: true },
  { key: 'TelegramWebhookSecret', value: '', secret: true, set: false, root_only: true },
  { key: 'FutureOption', value: 'x' },
  { key: 'ChatCacheEnabled', value: 'false' },
  { key: 'ChatCacheExpireMinute', value: '5' },
  { key: 'ChatCacheRatio', value: '0' },
  { key: 'ChatCacheMaxEntries', value: '10000' },
  { key: 'ChatCacheMaxEntryKB', value: '512' },
  { key: 'MjNotifyEnabled', value: 'false' },
  { key: 'CircuitBreakerEnabled', value: 'false' },
  { key: 'CircuitBreakerErrorRatio', value: '0.5' },
  { key: 'CircuitBreakerMinRequests', value: '10' },
  { key: 'CircuitBreakerWindowSeconds', value: '60' },
  { key: 'CircuitBreakerOpenSeconds', value: '30' },
  { key: 'LatencyAwareRouting', value: 'false' },
]

let options: OptionItem[] = mockOptions()

export function resetSettingsMocks(initial: OptionItem[] = mockOptions()): void {
  options = initial.map((o) => ({ ...o }))
}

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data })

type Change = { key: string; value: unknown }

/** Applies a change to the mock's rows; the refusal's text when there is no such key. */
function apply(c: Change): string | null {
  const row = options.find((o) => o.key === c.key)
  if (!row) return `unknown option ${c.key}`
  if (row.secret) row.set = true
  else row.value = String(c.value)
  return null
}

export const settingsHandlers = [
  http.get('*/api/option', () => ok(options)),
  http.put('*/api/option/batch', async ({ request }) => {
    const { options: changes } = (await request.json()) as { options: Change[] }
    const unknown = changes.find((c) => !options.some((o) => o.key === c.key))
    if (unknown) return HttpResponse.json({ success: false, message: `unknown option ${unknown.key}`, code: 'unknown_option' }, { status: 400 })
    changes.forEach(apply)
    return ok(changes.map((c) => ({ key: c.key, value: options.find((o) => o.key === c.key)?.secret ? '' : String(c.value) })))
  }),
  http.put('*/api/option', async ({ request }) => {
    const body = (await request.json()) as Change
    const refused = apply(body)
    if (refused) return HttpResponse.json({ success: false, message: refused }, { status: 400 })
    const row = options.find((o) => o.key === body.key)
    return ok({ key: body.key, value: row?.secret ? '' : row?.value })
  }),
]
