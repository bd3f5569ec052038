/**
 * Chat-client links for an API key (spec sections 1 and 3, "Chat-link entry"): the site's
 * `chat_links` (from /api/status) are templates with the placeholders {key} and {server}.
 */
export interface ChatLink {
  name: string
  url: string
  show: boolean
  sort: number
}

/** The entries of `chat_links` that are well formed, in their `sort` order (shown ones only by default). */
export function parseChatLinks(raw: unknown, { includeHidden = false } = {}): ChatLink[] {
  if (!Array.isArray(raw)) return []
  const links: ChatLink[] = []
  for (const entry of raw) {
    if (typeof entry !== 'object' || entry === null) continue
    const { name, url, show, sort } = entry as Record<string, unknown>
    if (typeof name !== 'string' || !name.trim() || typeof url !== 'string' || !url.trim()) continue
    const link = { name: name.trim(), url: url.trim(), show: show !== false, sort: typeof sort === 'number' ? sort : 0 }
    if (link.show || includeHidden) links.push(link)
  }
  return links.sort((a, b) => a.sort - b.sort)
}

/** The address clients should call: the site's server_address, else this page's origin; no trailing slash. */
export function serverAddress(configured: string, origin: string): string {
  return (configured.trim() || origin).replace(/\/+$/, '')
}

/** The template with every {key} and {server} filled in. */
export function fillChatLink(template: string, key: string, server: string): string {
  return template.replaceAll('{key}', key).replaceAll('{server}', server)
}

/** The schemes a chat link may use (the server refuses others with `invalid_chat_link`). */
export const CHAT_LINK_SCHEMES = ['http:', 'https:', 'ama:', 'opencat:'] as const

/** Whether a chat link's address starts with one of {@link CHAT_LINK_SCHEMES}. */
export function isChatLinkScheme(url: string): boolean {
  const scheme = schemeOf(url)
  return scheme !== undefined && (CHAT_LINK_SCHEMES as readonly string[]).includes(scheme)
}

const BLOCKED_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:'])

/** The scheme of an absolute URL (lower case, with the colon), or undefined when it is not one. */
export function schemeOf(url: string): string | undefined {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim())
  return m?.[1] ? `${m[1].toLowerCase()}:` : undefined
}

/** Whether /jump may send the browser to this address at all (never script or data URLs). */
export function isJumpable(url: string): boolean {
  const scheme = schemeOf(url)
  return scheme !== undefined && !BLOCKED_SCHEMES.has(scheme)
}

/** Web links open in a new tab; an app's own scheme (ama://, opencat://) goes through /jump. */
export function isWebLink(url: string): boolean {
  const scheme = schemeOf(url)
  return scheme === 'http:' || scheme === 'https:'
}

/**
 * Whether `url` is where one of the site's chat links leads (same scheme, and same host for
 * web links): /jump goes there on its own; anywhere else it asks first.
 */
export function matchesChatLink(url: string, links: ChatLink[]): boolean {
  const scheme = schemeOf(url)
  if (!scheme || !isJumpable(url)) return false
  return links.some((l) => {
    if (schemeOf(l.url) !== scheme) return false
    if (scheme !== 'http:' && scheme !== 'https:') return true
    try {
      return new URL(l.url.replaceAll('{key}', 'k').replaceAll('{server}', 's')).host === new URL(url).host
    } catch {
      return false
    }
  })
}
