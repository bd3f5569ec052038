import { zodResolver } from '@hookform/resolvers/zod'
import { MailIcon, SendIcon } from 'lucide-react'
import { useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { z } from 'zod'
import { useTurnstile } from '@/components/turnstile'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { Spinner } from '@/components/ui/spinner'
import { useCountdown } from '@/hooks/use-countdown'
import { notify } from '@/lib/toast'
import type { User } from '@/types/api'
import { useBindEmail, useSendBindCode } from '../api/bind-email'

/** The card's element id: the account-binding card links here. */
export const EMAIL_BINDING_ID = 'email-binding'

/** Seconds before another code may be asked for (the server also limits the rate). */
const RESEND_SECONDS = 60

/**
 * The account's e-mail address: bound (or changed) with a code sent to the new address, so an
 * address is only ever bound by whoever reads its mail.
 */
export function EmailBindingCard({ user }: { user: User }) {
  const { t } = useTranslation()
  const schema = useMemo(
    () =>
      z.object({
        email: z.string().trim().email(t('profile:email.invalid')),
        code: z.string().trim().min(1, t('profile:email.codeRequired')),
      }),
    [t],
  )
  const form = useForm<z.input<typeof schema>, unknown, z.output<typeof schema>>({
    resolver: zodResolver(schema),
    defaultValues: { email: '', code: '' },
  })
  const send = useSendBindCode()
  const bind = useBindEmail()
  const { left, start } = useCountdown(RESEND_SECONDS)
  const turnstile = useTurnstile()

  const sendCode = async () => {
    if (!(await form.trigger('email'))) return
    const email = form.getValues('email').trim()
    send.mutate(
      { email, turnstile: turnstile.take() },
      {
        onSuccess: () => {
          start()
          notify.success(t('profile:email.sent', { email }))
        },
      },
    )
  }

  const onSubmit = form.handleSubmit(async ({ email, code }) => {
    try {
      const updated = await bind.mutateAsync({ email, code })
      notify.success(t('profile:email.bound', { email: updated.email }))
      form.reset({ email: '', code: '' })
    } catch {
      // Shown by the central error handler (a wrong code, an address taken meanwhile).
    }
  })

  return (
    <Card id={EMAIL_BINDING_ID} className="scroll-mt-20" data-testid="email-binding">
      <CardHeader>
        <CardTitle>
          <h2>{t('profile:email.title')}</h2>
        </CardTitle>
        <CardDescription>{t('profile:email.description')}</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-4">
        <p className="flex flex-wrap items-center gap-2 text-sm">
          <MailIcon aria-hidden className="size-4 text-muted-foreground" />
          {t('profile:email.current')}
          {user.email ? (
            <span className="font-medium" data-testid="email-current">
              {user.email}
            </span>
          ) : (
            <Badge variant="outline" data-testid="email-current">
              {t('profile:email.none')}
            </Badge>
          )}
        </p>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4 sm:grid-cols-[1fr_auto] sm:items-start" data-testid="email-binding-form">
            <TextField control={form.control} name="email" label={user.email ? t('profile:email.newAddress') : t('profile:email.address')} type="email" autoComplete="email" />
            <Button
              type="button"
              variant="outline"
              className="sm:mt-[1.375rem]"
              onClick={() => void sendCode()}
              disabled={left > 0 || send.isPending || !turnstile.ready}
              data-testid="email-send-code"
            >
              {send.isPending ? <Spinner /> : <SendIcon />}
              {left > 0 ? t('profile:email.resendIn', { s: left }) : t('profile:email.send')}
            </Button>
            <TextField control={form.control} name="code" label={t('profile:email.code')} inputMode="numeric" autoComplete="one-time-code" />
            <Button type="submit" className="sm:mt-[1.375rem]" disabled={bind.isPending} data-testid="email-bind">
              {bind.isPending && <Spinner />}
              {t('profile:email.bind')}
            </Button>
            {turnstile.widget}
          </form>
        </Form>
      </CardContent>
    </Card>
  )
}
