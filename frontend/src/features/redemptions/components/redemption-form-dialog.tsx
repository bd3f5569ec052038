import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { FormDialog, TextField, useFormDialog } from '@/components/form-kit'
import { FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { parseQuotaText, renderQuota, type QuotaUnit } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import { useCreateRedemptions } from '../api/create-redemptions'
import { useUpdateRedemption } from '../api/update-redemption'
import {
  COUNT_MAX,
  createRedemptionSchema,
  redemptionFormDefaults,
  type RedemptionCreatePayload,
  type RedemptionFormValues,
} from '../schemas'
import type { Redemption } from '../types'

export interface RedemptionFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The code to edit; none creates a batch. */
  redemption?: Redemption
  /** After a create: the new codes. */
  onCreated?: (codes: string[]) => void
}

/** Create a batch of codes, or edit one code's name and quota. */
export function RedemptionFormDialog({ open, onOpenChange, redemption, onCreated }: RedemptionFormDialogProps) {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const unit = useMemo<QuotaUnit>(() => ({ dollars: display_in_currency, perUnit: quota_per_unit }), [display_in_currency, quota_per_unit])
  const schema = useMemo(() => createRedemptionSchema(t, unit), [t, unit])
  const createMutation = useCreateRedemptions()
  const updateMutation = useUpdateRedemption()
  const { form, dialog } = useFormDialog<RedemptionFormValues, RedemptionCreatePayload, number>({
    open,
    onOpenChange,
    resolver: zodResolver(schema),
    defaults: () => redemptionFormDefaults(redemption, unit),
    source: redemption,
    also: unit,
    save: async (payload) => {
      if (redemption) {
        await updateMutation.mutateAsync({ id: redemption.id, name: payload.name, quota: payload.quota })
        return 0
      }
      const { codes } = await createMutation.mutateAsync(payload)
      onCreated?.(codes)
      return codes.length
    },
    told: (count) => (redemption ? t('redemptions:toast.updated') : t('redemptions:toast.created', { count })),
    pending: createMutation.isPending || updateMutation.isPending,
  })

  const typed = parseQuotaText(useWatch({ control: form.control, name: 'quota' }), unit)
  const quotaHint = Number.isNaN(typed)
    ? undefined
    : unit.dollars
      ? t('redemptions:form.quotaUnits', { units: typed.toLocaleString() })
      : t('redemptions:form.quotaHint', { amount: renderQuota(typed, { displayInCurrency: true, quotaPerUnit: quota_per_unit }) })

  return (
    <FormDialog
      {...dialog}
      title={redemption ? t('redemptions:form.editTitle') : t('redemptions:form.createTitle')}
      description={t('redemptions:form.description')}
      testId="redemption-form"
      submitLabel={redemption ? t('common:actions.save') : t('redemptions:form.submitCreate')}
    >
      <TextField control={form.control} name="name" label={t('redemptions:form.name')} autoComplete="off" placeholder={t('redemptions:form.namePlaceholder')} />
      <FormField
        control={form.control}
        name="quota"
        render={({ field }) => (
          <FormItem>
            <FormLabel>{t('redemptions:form.quota')}</FormLabel>
            <div className="relative">
              {unit.dollars && (
                <span className="pointer-events-none absolute inset-y-0 left-3 flex items-center text-sm text-muted-foreground">
                  $
                </span>
              )}
              <FormControl>
                <Input
                  type="number"
                  min={0}
                  step={unit.dollars ? 'any' : 1}
                  inputMode={unit.dollars ? 'decimal' : 'numeric'}
                  className={unit.dollars ? 'pl-7' : undefined}
                  {...field}
                />
              </FormControl>
            </div>
            {quotaHint && <FormDescription>{quotaHint}</FormDescription>}
            <FormMessage />
          </FormItem>
        )}
      />
      {!redemption && (
        <TextField
          control={form.control}
          name="count"
          label={t('redemptions:form.count')}
          description={t('redemptions:form.countHint', { max: COUNT_MAX })}
          type="number"
          min={1}
          max={COUNT_MAX}
          step={1}
          inputMode="numeric"
        />
      )}
    </FormDialog>
  )
}
