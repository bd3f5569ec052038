import { useTranslation } from 'react-i18next'
import { AvailableModelsPanel } from '@/features/pricing/components/available-models-panel'

export default function ModelPriceRoute() {
  const { t } = useTranslation()
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('pricing:available.title')}</h1>
        <p className="text-muted-foreground">{t('pricing:available.description')}</p>
      </div>
      <AvailableModelsPanel />
    </div>
  )
}
