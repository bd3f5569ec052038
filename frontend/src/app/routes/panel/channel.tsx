import { useTranslation } from 'react-i18next'
import { ChannelsPanel } from '@/features/channels/components/channels-panel'
import { AdminOnly } from './admin-only'

export default function ChannelRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('channels:title')}</h1>
          <p className="text-muted-foreground">{t('channels:description')}</p>
        </div>
        <ChannelsPanel />
      </div>
    </AdminOnly>
  )
}
