import { http, HttpResponse } from 'msw'
import { BUILTIN_COMMANDS, type TelegramMenu, type TelegramMenuPayload, type TelegramStatus } from '../types'

export function mockTelegramMenu(overrides: Partial<TelegramMenu> = {}): TelegramMenu {
  return {
    id: 1,
    command: 'pricing',
    description: '查看模型价格',
    parse_mode: '',
    reply_message: '价格见 https://example.com/price',
    ...overrides,
  }
}

export function mockTelegramStatus(overrides: Partial<TelegramStatus> = {}): TelegramStatus {
  return {
    configured: true,
    mode: 'webhook',
    online: true,
    username: 'switchboard_bot',
    running: true,
    reload_needed: false,
    last_error: '',
    ...overrides,
  }
}

/** A fake bot: the menu store (list with keyword and paging, create, update, delete), its status and reload. */
let rows: TelegramMenu[] = []
let nextId = 1
let status: TelegramStatus = mockTelegramStatus()

export function resetTelegramMocks(initial: TelegramMenu[] = [], initialStatus: Partial<TelegramStatus> = {}): void {
  rows = initial.map((r) => ({ ...r }))
  nextId = Math.max(0, ...rows.map((r) => r.id)) + 1
  status = mockTelegramStatus(initialStatus)
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })
const refuse = (status: number, code: string, message: string) => HttpResponse.json({ success: false, message, code }, { status })

/** The server's checks: a refusal, or null. */
function check(body: TelegramMenuPayload, id = 0) {
  if (!/^[a-z0-9_]{1,32}$/.test(body.command) || !body.description.trim() || !body.reply_message.trim()) {
    return refuse(400, 'telegram_menu_invalid', 'invalid telegram menu entry')
  }
  if ((BUILTIN_COMMANDS as readonly string[]).includes(body.command) || rows.some((r) => r.command === body.command && r.id !== id)) {
    return refuse(409, 'telegram_command_taken', 'this command is already taken')
  }
  return null
}

export const telegramHandlers = [
  http.get('*/api/option/telegram/status', () => ok(status)),
  http.put('*/api/option/telegram/reload', () => {
    if (!status.configured) return refuse(409, 'telegram_not_configured', 'the Telegram bot token is not set')
    status = { ...status, reload_needed: false }
    return ok({ commands: BUILTIN_COMMANDS.length + rows.length })
  }),
  http.get('*/api/option/telegram', ({ request }) => {
    const url = new URL(request.url)
    const page = Number(url.searchParams.get('page') ?? 1)
    const size = Number(url.searchParams.get('size') ?? 10)
    const keyword = (url.searchParams.get('keyword') ?? '').toLowerCase()
    const matched = rows
      .filter((r) => !keyword || r.command.includes(keyword) || r.description.toLowerCase().includes(keyword))
      .sort((a, b) => a.command.localeCompare(b.command) || a.id - b.id)
    return ok({ data: matched.slice((page - 1) * size, page * size), page, size, total_count: matched.length })
  }),
  http.get('*/api/option/telegram/:id', ({ params }) => {
    const row = rows.find((r) => r.id === Number(params.id))
    return row ? ok(row) : refuse(404, 'telegram_menu_not_found', 'menu entry not found')
  }),
  http.post('*/api/option/telegram', async ({ request }) => {
    const body = (await request.json()) as TelegramMenuPayload
    const refused = check(body)
    if (refused) return refused
    const row = { ...body, id: nextId++ }
    rows.push(row)
    status = { ...status, reload_needed: true }
    return ok(row, 201)
  }),
  http.put('*/api/option/telegram', async ({ request }) => {
    const body = (await request.json()) as TelegramMenu
    const row = rows.find((r) => r.id === body.id)
    if (!row) return refuse(404, 'telegram_menu_not_found', 'menu entry not found')
    const refused = check(body, body.id)
    if (refused) return refused
    Object.assign(row, body)
    status = { ...status, reload_needed: true }
    return ok(row)
  }),
  http.delete('*/api/option/telegram/:id', ({ params }) => {
    const before = rows.length
    rows = rows.filter((r) => r.id !== Number(params.id))
    if (rows.length === before) return refuse(404, 'telegram_menu_not_found', 'menu entry not found')
    status = { ...status, reload_needed: true }
    return ok(null)
  }),
]
