import { LogOutIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router'
import { Button, type ButtonProps } from '@/components/ui/button'
import { useLogout } from '../api/logout'

export function SignOutButton(props: ButtonProps) {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const logoutMutation = useLogout()
  return (
    <Button
      variant="outline"
      size="sm"
      disabled={logoutMutation.isPending}
      onClick={() => logoutMutation.mutate(undefined, { onSettled: () => navigate('/', { replace: true }) })}
      data-testid="sign-out"
      aria-label={t('auth:logout.button')}
      {...props}
    >
      <LogOutIcon />
      <span className="hidden sm:inline">{t('auth:logout.button')}</span>
    </Button>
  )
}
