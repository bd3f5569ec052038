import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { TextField } from '@/components/form-kit'
import { Form, FormControl, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { useTurnstile } from '@/components/turnstile'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { useRegister, useSendVerification } from '../api/account'
import { createRegisterSchema, isEmail, RESEND_SECONDS, type RegisterFormValues, type RegisterPayload } from '../schemas'
import { useCountdown } from '@/hooks/use-countdown'

export interface RegisterFormProps {
  /** Site flag: the e-mail and its code are required. */
  emailVerification: boolean
  /** Invitation code (from ?aff= or the stored one). */
  affCode: string
  onSuccess: () => void
}

/** Register with username and password, plus e-mail and code when verification is on. */
export function RegisterForm({ emailVerification, affCode, onSuccess }: RegisterFormProps) {
  const { t } = useTranslation()
  const schema = useMemo(() => createRegisterSchema(t, emailVerification, affCode), [t, emailVerification, affCode])
  const form = useForm<RegisterFormValues, unknown, RegisterPayload>({
    resolver: zodResolver(schema),
    defaultValues: { username: '', password: '', confirm: '', email: '', verification_code: '' },
  })
  const registerMutation = useRegister()
  const codeMutation = useSendVerification()
  const { left, start } = useCountdown(RESEND_SECONDS)
  // One token per request: sending the code and registering each take a fresh one.
  const turnstile = useTurnstile()

  const sendCode = async () => {
    const email = form.getValues('email').trim()
    if (!isEmail(email)) {
      form.setError('email', { message: email ? t('public:validation.emailInvalid') : t('public:validation.emailRequired') })
      return
    }
    form.clearErrors('email')
    codeMutation.mutate({ email, turnstile: turnstile.take() }, {
      onSuccess: () => {
        start()
        notify.success(t('public:register.codeSent'))
      },
    })
  }

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      await registerMutation.mutateAsync({ ...payload, turnstile: turnstile.take() })
      notify.success(t('public:register.success'))
      onSuccess()
    } catch {
      // Shown by the central error handler.
    }
  })

  const text = (name: 'username' | 'email', label: string, auto: string, type = 'text') => (
    <TextField control={form.control} name={name} label={label} type={type} autoComplete={auto} />
  )

  return (
    <Form {...form}>
      <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="register-form">
        {text('username', t('public:register.username'), 'username')}
        {(['password', 'confirm'] as const).map((name) => (
          <FormField
            key={name}
            control={form.control}
            name={name}
            render={({ field }) => (
              <FormItem>
                <FormLabel>{name === 'password' ? t('public:register.password') : t('public:register.confirm')}</FormLabel>
                <FormControl>
                  <Input type="password" autoComplete="new-password" {...field} />
                </FormControl>
                <FormMessage />
              </FormItem>
            )}
          />
        ))}
        {text('email', emailVerification ? t('public:register.email') : t('public:register.emailOptional'), 'email', 'email')}
        {emailVerification && (
          <FormField
            control={form.control}
            name="verification_code"
            render={({ field }) => (
              <FormItem>
                <FormLabel>{t('public:register.code')}</FormLabel>
                <div className="flex gap-2">
                  <FormControl>
                    <Input autoComplete="one-time-code" inputMode="numeric" {...field} />
                  </FormControl>
                  <Button
                    type="button"
                    variant="outline"
                    className="shrink-0"
                    onClick={() => void sendCode()}
                    disabled={left > 0 || codeMutation.isPending || !turnstile.ready}
                    data-testid="register-send-code"
                  >
                    {codeMutation.isPending && <Spinner />}
                    {left > 0 ? t('public:register.resendIn', { seconds: left }) : t('public:register.sendCode')}
                  </Button>
                </div>
                <FormMessage />
              </FormItem>
            )}
          />
        )}
        {turnstile.widget}
        <Button
          type="submit"
          className="w-full"
          disabled={registerMutation.isPending || !turnstile.ready}
          data-testid="register-submit"
        >
          {registerMutation.isPending && <Spinner />}
          {t('public:register.submit')}
        </Button>
      </form>
    </Form>
  )
}
