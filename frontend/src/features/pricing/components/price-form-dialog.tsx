import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm, useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { Switch } from '@/components/ui/switch'
import { notify } from '@/lib/toast'
import { useCreatePrice, useUpdatePrice } from '../api/mutations'
import { priceValue } from '../price-format'
import { createPriceSchema, priceFormDefaults, type PriceFormValues } from '../schemas'
import { EXTRA_RATIO_KEYS, type ModelOwner, type Price, type PricePayload } from '../types'

export interface PriceFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The row to edit; none creates one. */
  price?: Price
  owners: ModelOwner[]
}

/** Create or edit one price. Server refusals are toasted centrally; the dialog stays open. */
export function PriceFormDialog({ open, onOpenChange, price, owners }: PriceFormDialogProps) {
  const { t } = useTranslation()
  const schema = useMemo(() => createPriceSchema(t), [t])
  const form = useForm<PriceFormValues, unknown, PricePayload>({
    resolver: zodResolver(schema),
    defaultValues: priceFormDefaults(price),
  })
  const createMutation = useCreatePrice()
  const updateMutation = useUpdatePrice()
  const pending = createMutation.isPending || updateMutation.isPending

  useEffect(() => {
    if (open) form.reset(priceFormDefaults(price))
  }, [open, price, form])

  const [type, input, output] = useWatch({ control: form.control, name: ['type', 'input', 'output'] })
  const hint = (ratio: string) => {
    const n = Number(ratio)
    if (ratio.trim() === '' || !Number.isFinite(n) || n < 0) return undefined
    return priceValue(n, 'usd', false) ?? t('pricing:free')
  }

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      if (price) await updateMutation.mutateAsync({ model: price.model, price: payload })
      else await createMutation.mutateAsync(payload)
      notify.success(price ? t('pricing:toast.updated') : t('pricing:toast.created'))
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-h-[90dvh] max-w-2xl overflow-y-auto" data-testid="price-form-dialog">
        <DialogHeader>
          <DialogTitle>{price ? t('pricing:form.editTitle') : t('pricing:form.createTitle')}</DialogTitle>
          <DialogDescription>{t('pricing:form.description')}</DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid grid-cols-1 gap-4" data-testid="price-form">
            <FormField
              control={form.control}
              name="model"
              render={({ field }) => (
                <FormItem>
                  <FormLabel>{t('pricing:form.model')}</FormLabel>
                  <FormControl>
                    <Input autoComplete="off" placeholder="gpt-4o-mini" {...field} />
                  </FormControl>
                  <FormDescription>{t('pricing:form.modelHint')}</FormDescription>
                  <FormMessage />
                </FormItem>
              )}
            />
            <div className="grid gap-4 sm:grid-cols-2">
              <FormField
                control={form.control}
                name="channel_type"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('pricing:form.owner')}</FormLabel>
                    <FormControl>
                      <NativeSelect {...field}>
                        <option value="">{t('pricing:form.ownerPlaceholder')}</option>
                        {owners.map((o) => (
                          <option key={o.id} value={o.id}>
                            {o.name} ({o.id})
                          </option>
                        ))}
                      </NativeSelect>
                    </FormControl>
                    <FormMessage />
                  </FormItem>
                )}
              />
              <FormField
                control={form.control}
                name="type"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('pricing:form.type')}</FormLabel>
                    <FormControl>
                      <NativeSelect {...field}>
                        <option value="tokens">{t('pricing:type.tokens')}</option>
                        <option value="times">{t('pricing:type.times')}</option>
                      </NativeSelect>
                    </FormControl>
                    <FormMessage />
                  </FormItem>
                )}
              />
            </div>
            <div className="grid gap-4 sm:grid-cols-2">
              <FormField
                control={form.control}
                name="input"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{type === 'times' ? t('pricing:form.callRatio') : t('pricing:form.input')}</FormLabel>
                    <FormControl>
                      <Input type="number" min={0} step="any" inputMode="decimal" {...field} />
                    </FormControl>
                    {hint(input) && (
                      <FormDescription>
                        {t(type === 'times' ? 'pricing:form.perCallHint' : 'pricing:form.per1KHint', { price: hint(input) })}
                      </FormDescription>
                    )}
                    <FormMessage />
                  </FormItem>
                )}
              />
              {type === 'tokens' && (
                <FormField
                  control={form.control}
                  name="output"
                  render={({ field }) => (
                    <FormItem>
                      <FormLabel>{t('pricing:form.output')}</FormLabel>
                      <FormControl>
                        <Input type="number" min={0} step="any" inputMode="decimal" {...field} />
                      </FormControl>
                      {hint(output) && <FormDescription>{t('pricing:form.per1KHint', { price: hint(output) })}</FormDescription>}
                      <FormMessage />
                    </FormItem>
                  )}
                />
              )}
              {type === 'tokens' && (
                <FormField
                  control={form.control}
                  name="max_output_tokens"
                  render={({ field }) => (
                    <FormItem>
                      <FormLabel>{t('pricing:form.maxOutput')}</FormLabel>
                      <FormControl>
                        <Input type="number" min={0} step={1} inputMode="numeric" {...field} />
                      </FormControl>
                      <FormDescription>{t('pricing:form.maxOutputHint')}</FormDescription>
                      <FormMessage />
                    </FormItem>
                  )}
                />
              )}
            </div>
            <fieldset className="grid gap-3 rounded-lg border p-3">
              <legend className="px-1 text-sm font-medium">{t('pricing:form.extra')}</legend>
              <p className="text-xs text-muted-foreground">{t('pricing:form.extraHint')}</p>
              <div className="grid grid-cols-2 gap-3 sm:grid-cols-3">
                {EXTRA_RATIO_KEYS.map((k) => (
                  <FormField
                    key={k}
                    control={form.control}
                    name={`extra.${k}`}
                    render={({ field }) => (
                      <FormItem>
                        <FormLabel className="text-xs">{t(`pricing:extra.${k}`)}</FormLabel>
                        <FormControl>
                          <Input type="number" min={0} step="any" inputMode="decimal" {...field} />
                        </FormControl>
                        <FormMessage />
                      </FormItem>
                    )}
                  />
                ))}
              </div>
            </fieldset>
            <FormField
              control={form.control}
              name="locked"
              render={({ field }) => (
                <FormItem className="flex items-center gap-2">
                  <FormControl>
                    <Switch checked={field.value} onCheckedChange={field.onChange} />
                  </FormControl>
                  <FormLabel>{t('pricing:form.locked')}</FormLabel>
                </FormItem>
              )}
            />
            <p className="-mt-2 text-xs text-muted-foreground">{t('pricing:form.lockedHint')}</p>
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={pending} data-testid="price-form-submit">
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
