import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { TextField } from '@/components/form-kit'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel } from '@/components/ui/form'
import { Spinner } from '@/components/ui/spinner'
import { Switch } from '@/components/ui/switch'
import { notify } from '@/lib/toast'
import { useGenerateInvoices } from '../api/generate-invoices'
import { createGenerateSchema, previousMonth, type GenerateValues } from '../schemas'

/** Root: generate (or regenerate) every user's invoice of an ended month. */
export function GenerateInvoicesDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useTranslation()
  const schema = useMemo(() => createGenerateSchema(t), [t])
  const form = useForm<GenerateValues>({ resolver: zodResolver(schema), defaultValues: { month: previousMonth(), regenerate: false } })
  const mutation = useGenerateInvoices()

  useEffect(() => {
    if (open) form.reset({ month: previousMonth(), regenerate: false })
  }, [open, form])

  const onSubmit = form.handleSubmit(async (values) => {
    try {
      const res = await mutation.mutateAsync({ month: values.month.trim(), regenerate: values.regenerate })
      notify.success(t('invoices:generate.done', { count: res.generated, month: values.month.trim() }))
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} data-testid="invoice-generate-dialog">
        <DialogHeader>
          <DialogTitle>{t('invoices:generate.title')}</DialogTitle>
          <DialogDescription>{t('invoices:generate.description')}</DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4">
            <TextField control={form.control} name="month" label={t('invoices:generate.month')} placeholder="2025-01" autoComplete="off" />
            <FormField
              control={form.control}
              name="regenerate"
              render={({ field }) => (
                <FormItem>
                  <div className="flex items-center gap-2">
                    <FormControl>
                      <Switch checked={field.value} onCheckedChange={field.onChange} />
                    </FormControl>
                    <FormLabel>{t('invoices:generate.regenerate')}</FormLabel>
                  </div>
                  <FormDescription>{t('invoices:generate.regenerateHint')}</FormDescription>
                </FormItem>
              )}
            />
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={mutation.isPending} data-testid="invoice-generate-submit">
                {mutation.isPending && <Spinner />}
                {t('invoices:generate.submit')}
              </Button>
            </DialogFooter>
          </form>
        </Form>
      </DialogContent>
    </Dialog>
  )
}
