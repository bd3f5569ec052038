import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Form, FormControl, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { useUpdateSelf } from '../api/update-self'
import { createPasswordSchema, type PasswordValues, type UpdateSelfPayload } from '../schemas'

const EMPTY: PasswordValues = { original_password: '', password: '', confirm: '' }

/** New password with the current one (the server signs out the other sessions). */
export function PasswordForm() {
  const { t } = useTranslation()
  const schema = useMemo(() => createPasswordSchema(t), [t])
  const form = useForm<PasswordValues, unknown, UpdateSelfPayload>({ resolver: zodResolver(schema), defaultValues: EMPTY })
  const mutation = useUpdateSelf()

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      await mutation.mutateAsync(payload)
      notify.success(t('profile:toast.passwordChanged'))
      form.reset(EMPTY)
    } catch {
      // Shown by the central error handler.
    }
  })

  const fields = [
    { name: 'original_password', label: t('profile:password.original'), auto: 'current-password' },
    { name: 'password', label: t('profile:password.new'), auto: 'new-password' },
    { name: 'confirm', label: t('profile:password.confirm'), auto: 'new-password' },
  ] as const

  return (
    <Card>
      <CardHeader>
        <CardTitle>
          <h2>{t('profile:password.title')}</h2>
        </CardTitle>
        <CardDescription>{t('profile:password.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid grid-cols-1 gap-4" data-testid="profile-password-form">
            <div className="grid gap-4 sm:grid-cols-3">
              {fields.map((f) => (
                <FormField
                  key={f.name}
                  control={form.control}
                  name={f.name}
                  render={({ field }) => (
                    <FormItem>
                      <FormLabel>{f.label}</FormLabel>
                      <FormControl>
                        <Input type="password" autoComplete={f.auto} {...field} />
                      </FormControl>
                      <FormMessage />
                    </FormItem>
                  )}
                />
              ))}
            </div>
            <div>
              <Button type="submit" disabled={mutation.isPending} data-testid="profile-password-submit">
                {mutation.isPending && <Spinner />}
                {t('profile:password.submit')}
              </Button>
            </div>
          </form>
        </Form>
      </CardContent>
    </Card>
  )
}
