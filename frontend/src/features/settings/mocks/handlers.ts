import { http, HttpResponse } from 'msw'
import type { OptionItem } from '../types'

export const mockOptions = (): OptionItem[] => [
  { key: 'QuotaPerUnit', value: '500000' },
  { key: 'DisplayInCurrencyEnabled', value: 'true' },
  { key: 'ChatLinks', value: '[]' },
  { key: 'RetryTimes', value: '0' },
  { key: 'SystemName', value: 'Switchboard' },
  { key: 'ServerAddress', value: '' },
  { key: 'SMTPToken', value: '', secret: true, set: true },
  { key: 'GitHubClientSecret', value: '', secret: true, set: false },
  { key: 'FutureOption', value: 'x' },
]

let options: OptionItem[] = mockOptions()

export function resetSettingsMocks(initial: OptionItem[] = mockOptions()): void {
  options = initial.map((o) => ({ ...o }))
}

const ok = (data: unknown) => HttpResponse.json({ success: true, message: '', data })

export const settingsHandlers = [
  http.get('*/api/option', () => ok(options)),
  http.put('*/api/option', async ({ request }) => {
    const body = (await request.json()) as { key: string; value: unknown }
    const row = options.find((o) => o.key === body.key)
    if (!row) return HttpResponse.json({ success: false, message: `unknown option ${body.key}` }, { status: 400 })
    if (row.secret) row.set = true
    else row.value = String(body.value)
    return ok({ key: body.key, value: row.secret ? '' : row.value })
  }),
]
