import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo, useState } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { useTurnstile } from '@/components/turnstile'
import { Spinner } from '@/components/ui/spinner'
import { useSendReset } from '../api/account'
import { createEmailSchema, RESEND_SECONDS } from '../schemas'
import { useCountdown } from '@/hooks/use-countdown'

/** Forgotten password: e-mail a reset link (the answer never says whether the address exists). */
export function ResetRequestForm() {
  const { t } = useTranslation()
  const schema = useMemo(() => createEmailSchema(t), [t])
  const form = useForm<{ email: string }>({ resolver: zodResolver(schema), defaultValues: { email: '' } })
  const mutation = useSendReset()
  const { left, start } = useCountdown(RESEND_SECONDS)
  const [sentTo, setSentTo] = useState<string | null>(null)
  const turnstile = useTurnstile()

  const onSubmit = form.handleSubmit(async ({ email }) => {
    try {
      await mutation.mutateAsync({ email, turnstile: turnstile.take() })
      setSentTo(email)
      start()
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <Form {...form}>
      <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="reset-form">
        <TextField control={form.control} name="email" label={t('public:reset.email')} type="email" autoComplete="email" />
        {sentTo && (
          <p className="rounded-md bg-muted p-3 text-sm" role="status" data-testid="reset-sent">
            {t('public:reset.sent', { email: sentTo })}
          </p>
        )}
        {turnstile.widget}
        <Button
          type="submit"
          className="w-full"
          disabled={mutation.isPending || left > 0 || !turnstile.ready}
          data-testid="reset-submit"
        >
          {mutation.isPending && <Spinner />}
          {left > 0 ? t('public:reset.resendIn', { seconds: left }) : t('public:reset.submit')}
        </Button>
      </form>
    </Form>
  )
}
