import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { FormDialog, TextField } from '@/components/form-kit'
import { notify } from '@/lib/toast'
import { useCreateOwner, useUpdateOwner } from '../api/save-owner'
import { createOwnerSchema, OWNER_MIN_ID, ownerFormDefaults, type OwnerFormValues } from '../schemas'
import type { ModelOwner } from '../types'

export interface OwnerFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The owner to edit; none creates one. */
  owner?: ModelOwner
}

/** Create or edit a model owner. The id is fixed once set. */
export function OwnerFormDialog({ open, onOpenChange, owner }: OwnerFormDialogProps) {
  const { t } = useTranslation()
  const editing = owner !== undefined
  const schema = useMemo(() => createOwnerSchema(t, editing), [t, editing])
  const form = useForm<OwnerFormValues, unknown, ModelOwner>({
    resolver: zodResolver(schema),
    defaultValues: ownerFormDefaults(owner),
  })
  const createMutation = useCreateOwner()
  const updateMutation = useUpdateOwner()
  const pending = createMutation.isPending || updateMutation.isPending

  useEffect(() => {
    if (open) form.reset(ownerFormDefaults(owner))
  }, [open, owner, form])

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      if (owner) {
        await updateMutation.mutateAsync({ ...payload, id: owner.id })
        notify.success(t('owners:toast.updated'))
      } else {
        await createMutation.mutateAsync(payload)
        notify.success(t('owners:toast.created'))
      }
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <FormDialog
      open={open}
      onOpenChange={onOpenChange}
      title={owner ? t('owners:form.editTitle') : t('owners:form.createTitle')}
      description={t('owners:form.description')}
      form={form}
      onSubmit={onSubmit}
      pending={pending}
      testId="owner-form"
    >
      <TextField
        control={form.control}
        name="id"
        label={t('owners:form.id')}
        description={t('owners:form.idHint', { min: OWNER_MIN_ID })}
        type="number"
        min={OWNER_MIN_ID}
        step={1}
        inputMode="numeric"
        disabled={editing}
      />
      <TextField control={form.control} name="name" label={t('owners:form.name')} autoComplete="off" placeholder={t('owners:form.namePlaceholder')} />
      <TextField control={form.control} name="icon" label={t('owners:form.icon')} description={t('owners:form.iconHint')} type="url" autoComplete="off" placeholder="https://" />
    </FormDialog>
  )
}
