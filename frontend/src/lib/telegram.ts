/** A bot's username as Telegram shows it: without a leading '@' and spaces. */
export function botUsername(name: string): string {
  return name.trim().replace(/^@+/, '')
}

/** The address that opens a chat with the bot (https://t.me/{username}). */
export function botLink(name: string): string {
  return `https://t.me/${encodeURIComponent(botUsername(name))}`
}
