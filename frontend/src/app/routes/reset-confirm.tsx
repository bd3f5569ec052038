import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { ResetConfirm } from '@/features/account/components/reset-confirm'

/** /user/reset?email=&token=: the link from the reset e-mail. */
export default function ResetConfirmRoute() {
  const { t } = useTranslation()
  const [params] = useSearchParams()
  return (
    <div className="flex flex-1 items-center justify-center px-4 py-12">
      <Card className="w-full max-w-sm">
        <CardHeader className="text-center">
          <CardTitle className="text-xl">
            <h1>{t('public:resetConfirm.title')}</h1>
          </CardTitle>
        </CardHeader>
        <CardContent>
          <ResetConfirm email={params.get('email') ?? ''} token={params.get('token') ?? ''} />
        </CardContent>
      </Card>
    </div>
  )
}
