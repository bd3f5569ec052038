import { useTranslation } from 'react-i18next'
import { Playground } from '@/features/playground/components/playground'
import { Screen } from '@/components/screen'

export default function PlaygroundRoute() {
  const { t } = useTranslation()
  return (
    <Screen title={t('playground:title')} description={t('playground:description')}>
      <Playground />
    </Screen>
  )
}
