import { useQueryClient } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { authKeys } from '@/features/auth/api/keys'
import { TopupPanel } from '@/features/topup/components/topup-panel'
import { Screen } from '@/components/screen'

export default function TopupRoute() {
  const { t } = useTranslation()
  const queryClient = useQueryClient()
  // The signed-in user is refetched, so every balance on screen (header, dashboard) follows.
  const refreshUser = () => void queryClient.invalidateQueries({ queryKey: authKeys.self() })
  return (
    <Screen title={t('topup:title')} description={t('topup:description')}>
      <TopupPanel onRedeemed={refreshUser} onPaid={refreshUser} />
    </Screen>
  )
}
