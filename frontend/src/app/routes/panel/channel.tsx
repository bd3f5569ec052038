import { useTranslation } from 'react-i18next'
import { ChannelsPanel } from '@/features/channels/components/channels-panel'
import { AdminScreen } from './admin-only'

export default function ChannelRoute() {
  const { t } = useTranslation()
  return <AdminScreen title={t('channels:title')} description={t('channels:description')}><ChannelsPanel /></AdminScreen>
}
