import { useTranslation } from 'react-i18next'
import { TelegramScreen } from '@/features/telegram/components/telegram-screen'
import { ROLE } from '@/types/api'
import { AdminOnly } from './admin-only'

/** The Telegram bot's status and menu: the super administrator only (the server refuses anyone else). */
export default function TelegramRoute() {
  const { t } = useTranslation()
  return (
    <AdminOnly min={ROLE.root}>
      <div className="grid grid-cols-1 gap-6">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{t('telegram:title')}</h1>
          <p className="text-muted-foreground">{t('telegram:description')}</p>
        </div>
        <TelegramScreen />
      </div>
    </AdminOnly>
  )
}
