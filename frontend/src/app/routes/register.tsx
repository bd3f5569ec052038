import { useTranslation } from 'react-i18next'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { STORAGE_KEYS } from '@/config'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { RegisterForm } from '@/features/account/components/register-form'
import { readString, writeString } from '@/lib/storage'
import { useSiteInfo } from '@/stores/site'

/** Local-storage key of the invitation code (spec section 3: `aff`). */
const AFF_KEY = STORAGE_KEYS.aff

export default function RegisterRoute() {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const [params] = useSearchParams()
  const { system_name, email_verification } = useSiteInfo()
  const fromLink = params.get('aff')?.trim()
  if (fromLink) writeString(AFF_KEY, fromLink)
  const affCode = fromLink || readString(AFF_KEY) || ''
  return (
    <div className="flex flex-1 items-center justify-center px-4 py-12">
      <Card className="w-full max-w-sm">
        <CardHeader className="text-center">
          <CardTitle className="text-xl">
            <h1>{t('public:register.title')}</h1>
          </CardTitle>
          <CardDescription>{t('public:register.subtitle', { name: system_name })}</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-4">
          <RegisterForm emailVerification={email_verification} affCode={affCode} onSuccess={() => navigate('/login')} />
          <p className="text-center text-sm text-muted-foreground">
            {t('public:register.haveAccount')}{' '}
            <Link to="/login" className="font-medium text-primary underline-offset-4 hover:underline">
              {t('public:register.toLogin')}
            </Link>
          </p>
        </CardContent>
      </Card>
    </div>
  )
}
