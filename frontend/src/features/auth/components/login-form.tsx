import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { useTurnstile } from '@/components/turnstile'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import type { User } from '@/types/api'
import { useLogin } from '../api/login'
import { createLoginSchema, type LoginFormValues, type LoginPayload } from '../schemas'

export interface LoginFormProps {
  onSuccess: (user: User) => void
}

/**
 * Username-or-e-mail and password. A failed sign-in is reported once, by the central error
 * handler (toast); the form itself only shows validation messages.
 */
export function LoginForm({ onSuccess }: LoginFormProps) {
  const { t } = useTranslation()
  const schema = useMemo(() => createLoginSchema(t), [t])
  const form = useForm<LoginFormValues, unknown, LoginPayload>({
    resolver: zodResolver(schema),
    defaultValues: { username: '', password: '' },
  })
  const loginMutation = useLogin()
  const turnstile = useTurnstile()

  const onSubmit = form.handleSubmit((values) =>
    loginMutation.mutateAsync({ ...values, turnstile: turnstile.take() }).then(
      (user) => {
        notify.success(t('auth:login.success'))
        onSuccess(user)
      },
      () => {
        // Already shown by the central handler; keep the typed username, clear the password.
        form.resetField('password')
      },
    ),
  )

  return (
    <Form {...form}>
      <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="login-form">
        <TextField control={form.control} name="username" label={t('auth:login.username')} autoComplete="username" placeholder={t('auth:login.usernamePlaceholder')} />
        <TextField control={form.control} name="password" label={t('auth:login.password')} type="password" autoComplete="current-password" placeholder={t('auth:login.passwordPlaceholder')} />
        {turnstile.widget}
        <Button type="submit" className="w-full" disabled={loginMutation.isPending || !turnstile.ready}>
          {loginMutation.isPending ? (
            <>
              <Spinner />
              {t('auth:login.submitting')}
            </>
          ) : (
            t('auth:login.submit')
          )}
        </Button>
      </form>
    </Form>
  )
}
