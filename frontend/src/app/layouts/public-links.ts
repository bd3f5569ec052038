import { useTranslation } from 'react-i18next'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'

export interface PublicLink {
  id: string
  label: string
  /** An in-app path, or an external URL when `external`. */
  to: string
  external?: boolean
  /** Only in the small-screen dropdown (spec 2.1: about). */
  mobileOnly?: boolean
}

/** A status page address as typed by the operator: a bare host gets https://. */
export function statusUrl(domain: string): string | undefined {
  const d = domain.trim()
  if (!d) return undefined
  const url = /^https?:\/\//i.test(d) ? d : `https://${d}`
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined
  } catch {
    return undefined
  }
}

/**
 * The public top bar's links (spec 2.1): home, chat (signed-in users only), price, guides,
 * tools, the status page (only while UptimeEnabled, opening UptimeDomain in a new tab), and
 * about in the small-screen menu.
 */
export function usePublicLinks(): PublicLink[] {
  const { t } = useTranslation()
  const user = useUser()
  const { UptimeEnabled, UptimeDomain, UptimePageName } = useSiteInfo()
  const links: PublicLink[] = [{ id: 'home', label: t('common:nav.home'), to: '/' }]
  if (user) links.push({ id: 'chat', label: t('public:nav.chat'), to: '/playground' })
  links.push(
    { id: 'price', label: t('public:nav.price'), to: '/price' },
    { id: 'guides', label: t('docs:nav.guides'), to: '/docs/guides' },
    { id: 'tools', label: t('docs:nav.tools'), to: '/docs/tools' },
  )
  const status = UptimeEnabled ? statusUrl(UptimeDomain) : undefined
  if (status) {
    links.push({ id: 'status', label: UptimePageName.trim() || t('public:nav.status'), to: status, external: true })
  }
  links.push({ id: 'about', label: t('public:nav.about'), to: '/about', mobileOnly: true })
  return links
}
