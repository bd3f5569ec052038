import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { ResetRequestForm } from '@/features/account/components/reset-request-form'

export default function ResetRoute() {
  const { t } = useTranslation()
  return (
    <div className="flex flex-1 items-center justify-center px-4 py-12">
      <Card className="w-full max-w-sm">
        <CardHeader className="text-center">
          <CardTitle className="text-xl">
            <h1>{t('public:reset.title')}</h1>
          </CardTitle>
          <CardDescription>{t('public:reset.subtitle')}</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-4">
          <ResetRequestForm />
          <p className="text-center text-sm">
            <Link to="/login" className="font-medium text-primary underline-offset-4 hover:underline">
              {t('public:reset.toLogin')}
            </Link>
          </p>
        </CardContent>
      </Card>
    </div>
  )
}
