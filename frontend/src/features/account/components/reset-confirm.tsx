import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { CopyField } from '@/components/copy-field'
import { Button } from '@/components/ui/button'
import { Spinner } from '@/components/ui/spinner'
import { useConfirmReset } from '../api/account'

/** The reset link's page: confirm, then show the new password once. */
export function ResetConfirm({ email, token }: { email: string; token: string }) {
  const { t } = useTranslation()
  const mutation = useConfirmReset()
  const [password, setPassword] = useState<string | null>(null)

  if (!email || !token) {
    return (
      <p className="rounded-md bg-destructive/10 p-3 text-sm text-destructive" role="alert" data-testid="reset-invalid">
        {t('public:resetConfirm.invalid')}
      </p>
    )
  }
  if (password) {
    return (
      <div className="grid gap-3" data-testid="reset-done">
        <p className="text-sm">{t('public:resetConfirm.done')}</p>
        <CopyField value={password} label={t('public:resetConfirm.newPassword')} testId="reset-new-password" />
        <Button asChild className="w-full">
          <Link to="/login">{t('public:resetConfirm.toLogin')}</Link>
        </Button>
      </div>
    )
  }
  return (
    <div className="grid gap-4">
      <p className="text-sm">
        {t('public:resetConfirm.account')} <span className="font-medium" data-testid="reset-email">{email}</span>
      </p>
      {mutation.isError && (
        <p className="text-sm text-destructive" role="alert" data-testid="reset-failed">
          {t('public:resetConfirm.failed')}
        </p>
      )}
      <Button
        className="w-full"
        disabled={mutation.isPending}
        onClick={() => mutation.mutate({ email, token }, { onSuccess: setPassword })}
        data-testid="reset-confirm"
      >
        {mutation.isPending && <Spinner />}
        {t('public:resetConfirm.submit')}
      </Button>
    </div>
  )
}
