import { useTranslation } from 'react-i18next'
import { OwnersPanel } from '@/features/owners/components/owners-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function ModelOwnedbyRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('owners:title')} description={t('owners:description')}>
        <OwnersPanel />
      </Screen>
    </AdminOnly>
  )
}
