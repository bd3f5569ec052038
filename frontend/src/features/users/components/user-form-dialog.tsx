import { zodResolver } from '@hookform/resolvers/zod'
import { useId, useMemo } from 'react'
import { useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { FormDialog, SelectField, TextField, useFormDialog } from '@/components/form-kit'
import { FormControl, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { parseQuotaText, renderQuota, type QuotaUnit } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import { ROLE } from '@/types/api'
import { useGroupMap } from '../api/get-group-map'
import { useCreateUser, useUpdateUser } from '../api/save-user'
import {
  createUserSchema,
  PASSWORD_MIN,
  toCreatePayload,
  toUpdatePayload,
  userFormDefaults,
  type UserFormOutput,
  type UserFormValues,
} from '../schemas'
import type { ManagedUser } from '../types'

export interface UserFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The user to edit; none creates one. */
  user?: ManagedUser
  /** Only root may create administrators. */
  canCreateAdmin: boolean
}

/** Create a user (with starting quota and role) or edit a user's profile and group. */
export function UserFormDialog({ open, onOpenChange, user, canCreateAdmin }: UserFormDialogProps) {
  const { t } = useTranslation()
  const listId = useId()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const editing = user !== undefined
  const unit = useMemo<QuotaUnit>(() => ({ dollars: display_in_currency, perUnit: quota_per_unit }), [display_in_currency, quota_per_unit])
  const schema = useMemo(() => createUserSchema(t, editing, unit), [t, editing, unit])
  const groups = useGroupMap()
  const createMutation = useCreateUser()
  const updateMutation = useUpdateUser()
  const { form, dialog } = useFormDialog<UserFormValues, UserFormOutput>({
    open,
    onOpenChange,
    resolver: zodResolver(schema),
    defaults: () => userFormDefaults(user),
    source: user,
    save: (values) =>
      user ? updateMutation.mutateAsync({ id: user.id, ...toUpdatePayload(values) }) : createMutation.mutateAsync(toCreatePayload(values, unit)),
    told: user ? t('users:toast.updated') : t('users:toast.created'),
    pending: createMutation.isPending || updateMutation.isPending,
  })

  const typed = parseQuotaText(useWatch({ control: form.control, name: 'quota' }), unit)
  const quotaHint = Number.isNaN(typed)
    ? undefined
    : unit.dollars
      ? t('users:form.quotaUnits', { units: typed.toLocaleString() })
      : t('users:form.quotaHint', { amount: renderQuota(typed, { displayInCurrency: true, quotaPerUnit: quota_per_unit }) })

  const text = (
    name: 'username' | 'password' | 'display_name' | 'email' | 'remark',
    label: string,
    extra: { type?: string; placeholder?: string; hint?: string; autoComplete?: string } = {},
  ) => (
    <TextField
      control={form.control}
      name={name}
      label={label}
      description={extra.hint || undefined}
      type={extra.type ?? 'text'}
      autoComplete={extra.autoComplete ?? 'off'}
      placeholder={extra.placeholder}
    />
  )

  return (
    <FormDialog
      {...dialog}
      title={user ? t('users:form.editTitle', { name: user.username }) : t('users:form.createTitle')}
      description={user ? t('users:form.editDescription') : t('users:form.createDescription')}
      testId="user-form"
      className="max-w-xl"
    >
      <div className="grid gap-4 sm:grid-cols-2">
        {text('username', t('users:form.username'))}
        {text('display_name', t('users:form.displayName'))}
        {text('password', t('users:form.password'), {
          type: 'password',
          autoComplete: 'new-password',
          hint: editing ? t('users:form.passwordKeep') : t('users:form.passwordHint', { min: PASSWORD_MIN }),
        })}
        {text('email', t('users:form.email'), { type: 'email', placeholder: 'name@example.com' })}
        <FormField
          control={form.control}
          name="group"
          render={({ field }) => (
            <FormItem>
              <FormLabel>{t('users:form.group')}</FormLabel>
              <FormControl>
                <Input autoComplete="off" list={`${listId}-groups`} {...field} />
              </FormControl>
              <datalist id={`${listId}-groups`}>
                {Object.entries(groups.data ?? {}).map(([symbol, g]) => (
                  <option key={symbol} value={symbol}>
                    {g.name}
                  </option>
                ))}
              </datalist>
              <FormMessage />
            </FormItem>
          )}
        />
        {!editing && (
          <TextField control={form.control} name="quota" label={t('users:form.quota')} description={quotaHint || undefined} type="number" min={0} step={1} inputMode="numeric" />
        )}
        {!editing && canCreateAdmin && (
          <SelectField control={form.control} name="role" label={t('users:form.role')}>
            <option value={ROLE.user}>{t('common:role.user')}</option>
            <option value={ROLE.admin}>{t('common:role.admin')}</option>
          </SelectField>
        )}
      </div>
      {!editing && text('remark', t('users:form.remark'), { hint: t('users:form.remarkHint') })}
    </FormDialog>
  )
}
