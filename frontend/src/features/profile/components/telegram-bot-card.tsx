import { BotIcon, ExternalLinkIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { botLink, botUsername } from '@/lib/telegram'
import { useSiteInfo } from '@/stores/site'

/** The site's Telegram bot (balance, top-up, API keys in Telegram), when it has one. */
export function TelegramBotCard() {
  const { t } = useTranslation()
  const { telegram_bot } = useSiteInfo()
  const name = botUsername(telegram_bot ?? '')
  if (!name) return null
  return (
    <Card data-testid="telegram-bot-card">
      <CardHeader>
        <CardTitle>
          <h2 className="flex items-center gap-2">
            <BotIcon aria-hidden className="size-5 text-muted-foreground" />
            {t('profile:telegramBot.title')}
          </h2>
        </CardTitle>
        <CardDescription>{t('profile:telegramBot.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <Button asChild variant="outline">
          <a href={botLink(name)} target="_blank" rel="noopener noreferrer" data-testid="telegram-bot-link">
            <ExternalLinkIcon />
            {t('profile:telegramBot.open', { bot: name })}
          </a>
        </Button>
      </CardContent>
    </Card>
  )
}
