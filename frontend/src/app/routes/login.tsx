import { useTranslation } from 'react-i18next'
import { Link, useNavigate } from 'react-router'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { LoginForm } from '@/features/auth/components/login-form'
import { OAuthButtons } from '@/features/auth/components/oauth-buttons'
import { useSiteInfo } from '@/stores/site'

export default function LoginRoute() {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const { system_name } = useSiteInfo()
  return (
    <div className="flex flex-1 items-center justify-center px-4 py-12">
      <Card className="w-full max-w-sm">
        <CardHeader className="text-center">
          <CardTitle className="text-xl">
            <h1>{t('auth:login.title')}</h1>
          </CardTitle>
          <CardDescription>{t('auth:login.subtitle', { name: system_name })}</CardDescription>
        </CardHeader>
        <CardContent>
          <LoginForm onSuccess={() => navigate('/panel')} />
          <div className="mt-4 flex justify-between text-sm">
            <Link to="/reset" className="text-muted-foreground underline-offset-4 hover:underline" data-testid="login-reset-link">
              {t('public:reset.title')}
            </Link>
            <Link to="/register" className="font-medium text-primary underline-offset-4 hover:underline" data-testid="login-register-link">
              {t('public:register.title')}
            </Link>
          </div>
          {/* A code that bound the identity to an account already signed in goes to the profile. */}
          <OAuthButtons onSuccess={() => navigate('/panel')} />
        </CardContent>
      </Card>
    </div>
  )
}
