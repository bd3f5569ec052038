import { useQueryClient } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { authKeys } from '@/features/auth/api/keys'
import { TopupPanel } from '@/features/topup/components/topup-panel'

export default function TopupRoute() {
  const { t } = useTranslation()
  const queryClient = useQueryClient()
  // The signed-in user is refetched, so every balance on screen (header, dashboard) follows.
  const refreshUser = () => void queryClient.invalidateQueries({ queryKey: authKeys.self() })
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('topup:title')}</h1>
        <p className="text-muted-foreground">{t('topup:description')}</p>
      </div>
      <TopupPanel onRedeemed={refreshUser} onPaid={refreshUser} />
    </div>
  )
}
