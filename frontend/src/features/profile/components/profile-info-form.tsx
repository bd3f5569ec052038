import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import type { User } from '@/types/api'
import { useUpdateSelf } from '../api/update-self'
import { createInfoSchema, type InfoValues } from '../schemas'

/** Username and display name (PUT /api/user/self). */
export function ProfileInfoForm({ user }: { user: User }) {
  const { t } = useTranslation()
  const schema = useMemo(() => createInfoSchema(t), [t])
  const form = useForm<InfoValues>({
    resolver: zodResolver(schema),
    defaultValues: { username: user.username, display_name: user.display_name },
  })
  const mutation = useUpdateSelf()
  const { reset } = form
  useEffect(() => {
    reset({ username: user.username, display_name: user.display_name })
  }, [user.username, user.display_name, reset])

  const onSubmit = form.handleSubmit(async (values) => {
    try {
      await mutation.mutateAsync({ username: values.username.trim(), display_name: values.display_name.trim() })
      notify.success(t('profile:toast.saved'))
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <Card>
      <CardHeader>
        <CardTitle>
          <h2>{t('profile:info.title')}</h2>
        </CardTitle>
        <CardDescription>{t('profile:info.description')}</CardDescription>
      </CardHeader>
      <CardContent>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid grid-cols-1 gap-4" data-testid="profile-info-form">
            <div className="grid gap-4 sm:grid-cols-2">
              <TextField control={form.control} name="username" label={t('profile:info.username')} autoComplete="username" />
              <TextField control={form.control} name="display_name" label={t('profile:info.displayName')} autoComplete="nickname" />
            </div>
            <div className="grid gap-1 text-sm sm:grid-cols-2">
              <div>
                <span className="text-muted-foreground">{t('profile:info.email')}: </span>
                <span data-testid="profile-email">{user.email || t('profile:info.notBound')}</span>
              </div>
              <div>
                <span className="text-muted-foreground">{t('profile:info.group')}: </span>
                <span>{user.group || '-'}</span>
              </div>
            </div>
            <div>
              <Button type="submit" disabled={mutation.isPending} data-testid="profile-info-submit">
                {mutation.isPending && <Spinner />}
                {t('common:actions.save')}
              </Button>
            </div>
          </form>
        </Form>
      </CardContent>
    </Card>
  )
}
