import { useEffect } from 'react'
import i18n, { applyServerLanguage } from '@/lib/i18n'
import { notify } from '@/lib/toast'
import { keepStoredSiteInfo, setSiteInfo, useSiteInfo } from '@/stores/site'
import { useStatus } from '../api/get-status'

/**
 * Loads GET /api/status at start-up into app state and localStorage `siteInfo`; on failure
 * keeps the stored copy and says so. Keeps the page title equal to the system name.
 */
export function SiteStatusLoader() {
  const { data, isError } = useStatus()
  const { system_name } = useSiteInfo()

  useEffect(() => {
    if (!data) return
    setSiteInfo(data)
    applyServerLanguage(data.language)
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
