import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { RefreshSelect } from '@/features/system/components/refresh-select'
import { SystemInfoPanel } from '@/features/system/components/system-info-panel'
import { SystemLogPanel } from '@/features/system/components/system-log-panel'
import { useUser } from '@/stores/session'
import { ROLE } from '@/types/api'
import { AdminOnly } from './admin-only'

/** System panel: node info (administrators) and the server log (super administrator only). */
export default function SystemInfoRoute() {
  const { t } = useTranslation()
  const user = useUser()
  const [refreshMs, setRefreshMs] = useState(5_000)
  const isRoot = (user?.role ?? 0) >= ROLE.root
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div className="flex flex-wrap items-end justify-between gap-3">
          <div>
            <h1 className="text-2xl font-semibold tracking-tight">{t('system:title')}</h1>
            <p className="text-muted-foreground">{t('system:description')}</p>
          </div>
          <label className="flex items-center gap-2 text-sm">
            <span className="text-muted-foreground">{t('system:refresh.label')}</span>
            <RefreshSelect value={refreshMs} onChange={setRefreshMs} />
          </label>
        </div>
        <SystemInfoPanel intervalMs={refreshMs} />
        {isRoot && <SystemLogPanel intervalMs={refreshMs} />}
      </div>
    </AdminOnly>
  )
}
