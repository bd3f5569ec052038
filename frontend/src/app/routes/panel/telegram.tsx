import { useTranslation } from 'react-i18next'
import { TelegramScreen } from '@/features/telegram/components/telegram-screen'
import { ROLE } from '@/types/api'
import { AdminOnly } from './admin-only'
import { Screen } from '@/components/screen'

/** The Telegram bot's status and menu: the super administrator only (the server refuses anyone else). */
export default function TelegramRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly min={ROLE.root}>
      <Screen title={t('telegram:title')} description={t('telegram:description')}>
        <TelegramScreen />
      </Screen>
    </AdminOnly>
  )
}
