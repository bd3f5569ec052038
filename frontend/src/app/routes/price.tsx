import { useTranslation } from 'react-i18next'
import { PublicPriceTable } from '@/features/pricing/components/public-price-table'

/** The public price page (spec section 2.1: content at most 1200px wide). */
export default function PriceRoute() {
  const { t } = useTranslation()
  return (
    <section className="mx-auto grid w-full max-w-[1200px] grid-cols-1 gap-6 px-4 py-8">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight sm:text-3xl">{t('pricing:public.title')}</h1>
        <p className="text-muted-foreground">{t('pricing:public.description')}</p>
      </div>
      <PublicPriceTable />
    </section>
  )
}
