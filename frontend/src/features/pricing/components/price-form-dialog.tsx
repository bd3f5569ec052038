import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { FormDialog, SelectField, SwitchField, TextField, useFormDialog } from '@/components/form-kit'
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
  const createMutation = useCreatePrice()
  const updateMutation = useUpdatePrice()
  const { form, dialog } = useFormDialog<PriceFormValues, PricePayload>({
    open,
    onOpenChange,
    resolver: zodResolver(schema),
    defaults: () => priceFormDefaults(price),
    source: price,
    save: (payload) => (price ? updateMutation.mutateAsync({ model: price.model, price: payload }) : createMutation.mutateAsync(payload)),
    told: price ? t('pricing:toast.updated') : t('pricing:toast.created'),
    pending: createMutation.isPending || updateMutation.isPending,
  })

  const [type, input, output] = useWatch({ control: form.control, name: ['type', 'input', 'output'] })
  const hint = (ratio: string) => {
    const n = Number(ratio)
    if (ratio.trim() === '' || !Number.isFinite(n) || n < 0) return undefined
    return priceValue(n, 'usd', false) ?? t('pricing:free')
  }

  const ratioInput = { type: 'number', min: 0, step: 'any', inputMode: 'decimal' } as const
  return (
    <FormDialog
      {...dialog}
      title={price ? t('pricing:form.editTitle') : t('pricing:form.createTitle')}
      description={t('pricing:form.description')}
      testId="price-form"
      className="max-h-[90dvh] max-w-2xl overflow-y-auto"
      formClassName="grid grid-cols-1 gap-4"
    >
      <TextField control={form.control} name="model" label={t('pricing:form.model')} description={t('pricing:form.modelHint')} autoComplete="off" placeholder="gpt-4o-mini" />
      <div className="grid gap-4 sm:grid-cols-2">
        <SelectField control={form.control} name="channel_type" label={t('pricing:form.owner')}>
          <option value="">{t('pricing:form.ownerPlaceholder')}</option>
          {owners.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name} ({o.id})
            </option>
          ))}
        </SelectField>
        <SelectField control={form.control} name="type" label={t('pricing:form.type')}>
          <option value="tokens">{t('pricing:type.tokens')}</option>
          <option value="times">{t('pricing:type.times')}</option>
        </SelectField>
      </div>
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField
          control={form.control}
          name="input"
          label={type === 'times' ? t('pricing:form.callRatio') : t('pricing:form.input')}
          description={hint(input) && t(type === 'times' ? 'pricing:form.perCallHint' : 'pricing:form.per1KHint', { price: hint(input) })}
          {...ratioInput}
        />
        {type === 'tokens' && (
          <TextField
            control={form.control}
            name="output"
            label={t('pricing:form.output')}
            description={hint(output) && t('pricing:form.per1KHint', { price: hint(output) })}
            {...ratioInput}
          />
        )}
        {type === 'tokens' && (
          <TextField control={form.control} name="max_output_tokens" label={t('pricing:form.maxOutput')} description={t('pricing:form.maxOutputHint')} type="number" min={0} step={1} inputMode="numeric" />
        )}
      </div>
      <fieldset className="grid gap-3 rounded-lg border p-3">
        <legend className="px-1 text-sm font-medium">{t('pricing:form.extra')}</legend>
        <p className="text-xs text-muted-foreground">{t('pricing:form.extraHint')}</p>
        <div className="grid grid-cols-2 gap-3 sm:grid-cols-3">
          {EXTRA_RATIO_KEYS.map((k) => (
            <TextField key={k} control={form.control} name={`extra.${k}`} label={t(`pricing:extra.${k}`)} labelClassName="text-xs" {...ratioInput} />
          ))}
        </div>
      </fieldset>
      <SwitchField control={form.control} name="locked" label={t('pricing:form.locked')} inline />
      <p className="-mt-2 text-xs text-muted-foreground">{t('pricing:form.lockedHint')}</p>
    </FormDialog>
  )
}
