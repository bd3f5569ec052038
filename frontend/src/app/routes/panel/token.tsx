import { useTranslation } from 'react-i18next'
import { TokensPanel } from '@/features/tokens/components/tokens-panel'
import { Screen } from '@/components/screen'

export default function TokenRoute() {
  const { t } = useTranslation()
  return (
    <Screen title={t('tokens:title')} description={t('tokens:description')}>
      <TokensPanel />
    </Screen>
  )
}
