import { useTranslation } from 'react-i18next'
import { Playground } from '@/features/playground/components/playground'

/** /playground: the chat playground in the public layout (spec 2.1), for signed-in users. */
export default function PublicPlaygroundRoute() {
  const { t } = useTranslation()
  return (
    <div className="mx-auto grid w-full max-w-[1200px] grid-cols-1 gap-6 px-4 py-8">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('playground:title')}</h1>
        <p className="text-muted-foreground">{t('playground:description')}</p>
      </div>
      <Playground />
    </div>
  )
}
