import { useTranslation } from 'react-i18next'
import { TokensPanel } from '@/features/tokens/components/tokens-panel'

export default function TokenRoute() {
  const { t } = useTranslation()
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('tokens:title')}</h1>
        <p className="text-muted-foreground">{t('tokens:description')}</p>
      </div>
      <TokensPanel />
    </div>
  )
}
