import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm, useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { Spinner } from '@/components/ui/spinner'
import { renderQuota, type QuotaUnit } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
import { useChangeQuota } from '../api/change-quota'
import { createQuotaSchema, parseQuotaChange, type QuotaFormValues } from '../schemas'
import type { ManagedUser } from '../types'

/** Add (positive) or deduct (negative) quota with a remark; never more than the balance. */
export function QuotaDialog({ user, onClose }: { user: ManagedUser | null; onClose: () => void }) {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const balance = user?.quota ?? 0
  const unit = useMemo<QuotaUnit>(() => ({ dollars: display_in_currency, perUnit: quota_per_unit }), [display_in_currency, quota_per_unit])
  const schema = useMemo(() => createQuotaSchema(t, balance, unit), [t, balance, unit])
  const form = useForm<QuotaFormValues, unknown, { quota: number; remark: string }>({
    resolver: zodResolver(schema),
    defaultValues: { amount: '', remark: '' },
  })
  const mutation = useChangeQuota()

  useEffect(() => {
    if (user) form.reset({ amount: '', remark: '' })
  }, [user, form])

  const change = parseQuotaChange(useWatch({ control: form.control, name: 'amount' }), unit)
  const preview =
    !Number.isNaN(change) && change !== 0
      ? t('users:quota.preview', {
          change: renderQuota(change, display),
          after: renderQuota(balance + change, display),
        })
      : undefined

  const onSubmit = form.handleSubmit(async (body) => {
    if (!user) return
    try {
      await mutation.mutateAsync({ id: user.id, ...body })
      notify.success(t('users:toast.quotaChanged'))
      onClose()
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <Dialog open={user !== null} onOpenChange={(open) => !open && onClose()}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid="user-quota-dialog">
        <DialogHeader>
          <DialogTitle>{t('users:quota.title', { name: user?.username ?? '' })}</DialogTitle>
          <DialogDescription data-testid="user-quota-balance">
            {t('users:quota.balance', { balance: renderQuota(balance, display) })}
          </DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="user-quota-form">
            <TextField control={form.control} name="amount" label={t('users:quota.amount')} description={preview ?? t('users:quota.amountHint')} type="number" step={unit.dollars ? 'any' : 1} inputMode={unit.dollars ? 'decimal' : 'numeric'} />
            <TextField control={form.control} name="remark" label={t('users:quota.remark')} autoComplete="off" placeholder={t('users:quota.remarkPlaceholder')} />
            <DialogFooter>
              <Button type="button" variant="outline" onClick={onClose}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={mutation.isPending} data-testid="user-quota-submit">
                {mutation.isPending && <Spinner />}
                {t('users:quota.submit')}
              </Button>
            </DialogFooter>
          </form>
        </Form>
      </DialogContent>
    </Dialog>
  )
}
