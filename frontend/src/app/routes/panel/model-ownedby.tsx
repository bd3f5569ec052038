import { useTranslation } from 'react-i18next'
import { OwnersPanel } from '@/features/owners/components/owners-panel'
import { AdminOnly } from './admin-only'

export default function ModelOwnedbyRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('owners:title')}</h1>
          <p className="text-muted-foreground">{t('owners:description')}</p>
        </div>
        <OwnersPanel />
      </div>
    </AdminOnly>
  )
}
