import { useTranslation } from 'react-i18next'
import { Playground } from '@/features/playground/components/playground'

export default function PlaygroundRoute() {
  const { t } = useTranslation()
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('playground:title')}</h1>
        <p className="text-muted-foreground">{t('playground:description')}</p>
      </div>
      <Playground />
    </div>
  )
}
