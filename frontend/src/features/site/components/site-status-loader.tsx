import { useEffect } from 'react'
import { APP_VERSION } from '@/config'
import i18n, { applyServerLanguage } from '@/lib/i18n'
import { notify } from '@/lib/toast'
import { keepStoredSiteInfo, setModelOwners, setSiteInfo, useSiteInfo } from '@/stores/site'
import { useModelOwners } from '../api/get-model-owners'
import { useStatus } from '../api/get-status'

/**
 * The version check (spec section 3): the server's version must be the console's (major and
 * minor, `v` optional); empty and 0.0.0 count as different.
 */
export function isVersionMismatch(server: string | undefined, expected: string = APP_VERSION): boolean {
  const parts = (v: string) => v.trim().replace(/^v/i, '').split('.')
  const s = parts(server ?? '')
  if (!server?.trim() || s.every((x) => x === '0')) return true
  const e = parts(expected)
  return s[0] !== e[0] || (s[1] ?? '0') !== (e[1] ?? '0')
}

/**
 * Loads GET /api/status at start-up into app state and localStorage `siteInfo`; on failure
 * keeps the stored copy and says so. Loads the model owners into the site store. Keeps the
 * page title equal to the system name.
 */
export function SiteStatusLoader() {
  const { data, isError } = useStatus()
  const owners = useModelOwners()
  const { system_name } = useSiteInfo()

  useEffect(() => {
    if (owners.data) setModelOwners(owners.data)
  }, [owners.data])

  useEffect(() => {
    if (!data) return
    setSiteInfo(data)
    applyServerLanguage(data.language)
    if (isVersionMismatch(data.version)) {
      notify.warning(i18n.t('common:version.outdated', { server: data.version || '?', expected: APP_VERSION }))
    }
  }, [data])

  useEffect(() => {
    if (!isError) return
    keepStoredSiteInfo()
    notify.error(i18n.t('common:status.connectFailed'))
  }, [isError])

  useEffect(() => {
    document.title = system_name
  }, [system_name])

  return null
}
