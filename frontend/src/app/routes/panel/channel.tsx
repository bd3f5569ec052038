import { useTranslation } from 'react-i18next'
import { ChannelsPanel } from '@/features/channels/components/channels-panel'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

export default function ChannelRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <Screen title={t('channels:title')} description={t('channels:description')}>
        <ChannelsPanel />
      </Screen>
    </AdminOnly>
  )
}
