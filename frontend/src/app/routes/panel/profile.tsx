import { useTranslation } from 'react-i18next'
import { AccessTokenCard } from '@/features/profile/components/access-token-card'
import { AccountBindingCard } from '@/features/profile/components/account-binding-card'
import { EmailBindingCard } from '@/features/profile/components/email-binding-card'
import { InviteCard } from '@/features/profile/components/invite-card'
import { PasswordForm } from '@/features/profile/components/password-form'
import { ProfileInfoForm } from '@/features/profile/components/profile-info-form'
import { TelegramBotCard } from '@/features/profile/components/telegram-bot-card'
import { useUser } from '@/stores/session'
import { Screen } from '@/components/screen'

export default function ProfileRoute() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  const hasToken = (user as { has_access_token?: boolean }).has_access_token === true
  return (
    <Screen title={t('profile:title')} description={t('profile:description')}>
      <ProfileInfoForm user={user} />
      <AccountBindingCard user={user} />
      <EmailBindingCard user={user} />
      <TelegramBotCard />
      <PasswordForm />
      <InviteCard user={user} />
      <AccessTokenCard hasToken={hasToken} />
    </Screen>
  )
}
