/**
 * How Telegram formats a reply: '' sends plain text, else Telegram's parse mode
 * (https://core.telegram.org/bots/api#formatting-options).
 */
export const PARSE_MODES = ['', 'Markdown', 'MarkdownV2', 'HTML'] as const
export type ParseMode = (typeof PARSE_MODES)[number]

/**
 * The bot's own commands: the server answers them itself, so a menu entry may not take their
 * name (it refuses with `telegram_command_taken`).
 */
export const BUILTIN_COMMANDS = ['start', 'help', 'bind', 'unbind', 'balance', 'recharge', 'apikey', 'aff', 'cancel'] as const

/** A custom menu command as listed by GET /api/option/telegram: the bot answers `/command` with the reply. */
export interface TelegramMenu {
  id: number
  /** Without the leading '/': 1-32 of a-z, 0-9 and '_'. */
  command: string
  description: string
  parse_mode: ParseMode
  reply_message: string
}

/** Body of POST /api/option/telegram (PUT adds `id`). */
export type TelegramMenuPayload = Omit<TelegramMenu, 'id'>

/** How the bot receives updates: a webhook (online), long polling (offline), or not at all. */
export type TelegramMode = 'webhook' | 'polling' | 'off'

/** GET /api/option/telegram/status. */
export interface TelegramStatus {
  /** A bot token is set in the settings. */
  configured: boolean
  mode: TelegramMode
  /** True in webhook mode ("online"), false when polling ("offline"). */
  online: boolean
  /** The bot's username, without '@'; empty when not known. */
  username: string
  /** This server is receiving the bot's updates. */
  running: boolean
  /** The menu changed since the last reload (the commands Telegram shows are out of date). */
  reload_needed: boolean
  /** The last failure talking to Telegram; empty when none. */
  last_error: string
}

/** PUT /api/option/telegram/reload: how many commands (built-ins and menu) Telegram now shows. */
export interface TelegramReloadResult {
  commands: number
}
