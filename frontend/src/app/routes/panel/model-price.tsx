import { useTranslation } from 'react-i18next'
import { AvailableModelsPanel } from '@/features/pricing/components/available-models-panel'
import { Screen } from '@/components/screen'

export default function ModelPriceRoute() {
  const { t } = useTranslation()
  return (
    <Screen title={t('pricing:available.title')} description={t('pricing:available.description')}>
      <AvailableModelsPanel />
    </Screen>
  )
}
