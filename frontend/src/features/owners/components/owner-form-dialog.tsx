import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useTranslation } from 'react-i18next'
import { FormDialog, TextField, useFormDialog } from '@/components/form-kit'
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
  const createMutation = useCreateOwner()
  const updateMutation = useUpdateOwner()
  const { form, dialog } = useFormDialog<OwnerFormValues, ModelOwner>({
    open,
    onOpenChange,
    resolver: zodResolver(schema),
    defaults: () => ownerFormDefaults(owner),
    source: owner,
    save: (payload) => (owner ? updateMutation.mutateAsync({ ...payload, id: owner.id }) : createMutation.mutateAsync(payload)),
    told: owner ? t('owners:toast.updated') : t('owners:toast.created'),
    pending: createMutation.isPending || updateMutation.isPending,
  })

  return (
    <FormDialog
      {...dialog}
      title={owner ? t('owners:form.editTitle') : t('owners:form.createTitle')}
      description={t('owners:form.description')}
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
