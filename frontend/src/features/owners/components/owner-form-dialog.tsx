import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { Spinner } from '@/components/ui/spinner'
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
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid="owner-form-dialog">
        <DialogHeader>
          <DialogTitle>{owner ? t('owners:form.editTitle') : t('owners:form.createTitle')}</DialogTitle>
          <DialogDescription>{t('owners:form.description')}</DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="owner-form">
            <FormField
              control={form.control}
              name="id"
              render={({ field }) => (
                <FormItem>
                  <FormLabel>{t('owners:form.id')}</FormLabel>
                  <FormControl>
                    <Input type="number" min={OWNER_MIN_ID} step={1} inputMode="numeric" disabled={editing} {...field} />
                  </FormControl>
                  <FormDescription>{t('owners:form.idHint', { min: OWNER_MIN_ID })}</FormDescription>
                  <FormMessage />
                </FormItem>
              )}
            />
            <FormField
              control={form.control}
              name="name"
              render={({ field }) => (
                <FormItem>
                  <FormLabel>{t('owners:form.name')}</FormLabel>
                  <FormControl>
                    <Input autoComplete="off" placeholder={t('owners:form.namePlaceholder')} {...field} />
                  </FormControl>
                  <FormMessage />
                </FormItem>
              )}
            />
            <FormField
              control={form.control}
              name="icon"
              render={({ field }) => (
                <FormItem>
                  <FormLabel>{t('owners:form.icon')}</FormLabel>
                  <FormControl>
                    <Input type="url" autoComplete="off" placeholder="https://" {...field} />
                  </FormControl>
                  <FormDescription>{t('owners:form.iconHint')}</FormDescription>
                  <FormMessage />
                </FormItem>
              )}
            />
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={pending} data-testid="owner-form-submit">
                {pending && <Spinner />}
                {t('common:actions.save')}
              </Button>
            </DialogFooter>
          </form>
        </Form>
      </DialogContent>
    </Dialog>
  )
}
