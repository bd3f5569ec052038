import { useTranslation } from 'react-i18next'
import { TelegramScreen } from '@/features/telegram/components/telegram-screen'
import { ROLE } from '@/types/api'
import { AdminScreen } from './admin-only'

/** The Telegram bot's status and menu: the super administrator only (the server refuses anyone else). */
export default function TelegramRoute() {
  const { t } = useTranslation()
  return <AdminScreen min={ROLE.root} title={t('telegram:title')} description={t('telegram:description')}><TelegramScreen /></AdminScreen>
}
