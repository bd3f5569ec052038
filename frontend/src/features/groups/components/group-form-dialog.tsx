import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { FormDialog, SwitchField, TextField, useFormDialog } from '@/components/form-kit'
import { renderQuota } from '@/lib/format'
import { useQuotaDisplay } from '@/stores/site'
import { useCreateGroup, useUpdateGroup } from '../api/save-group'
import { API_RATE_MAX, createGroupSchema, groupFormDefaults, type GroupFormValues, type GroupPayload } from '../schemas'
import type { UserGroup } from '../types'

export interface GroupFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The group to edit; none creates one. */
  group?: UserGroup
}

type SwitchName = 'public' | 'promotion' | 'enabled'

/** Create or edit a user group; the symbol is fixed once created. */
export function GroupFormDialog({ open, onOpenChange, group }: GroupFormDialogProps) {
  const { t } = useTranslation()
  const display = useQuotaDisplay()
  const schema = useMemo(() => createGroupSchema(t), [t])
  const createMutation = useCreateGroup()
  const updateMutation = useUpdateGroup()
  const { form, dialog } = useFormDialog<GroupFormValues, GroupPayload>({
    open,
    onOpenChange,
    resolver: zodResolver(schema),
    defaults: () => groupFormDefaults(group),
    source: group,
    // The symbol is sent unchanged (the server refuses a different one).
    save: (payload) =>
      group ? updateMutation.mutateAsync({ id: group.id, ...payload, symbol: group.symbol }) : createMutation.mutateAsync(payload),
    told: group ? t('groups:toast.updated') : t('groups:toast.created'),
    pending: createMutation.isPending || updateMutation.isPending,
  })

  const [promotion, minText, maxText] = useWatch({
    control: form.control,
    name: ['promotion', 'min_topup', 'max_topup'],
  })
  const amount = (text: string) => (/^\d+$/.test(text.trim()) ? renderQuota(Number(text), display) : undefined)

  const switchField = (name: SwitchName, label: string, hint: string) => (
    <SwitchField control={form.control} name={name} label={label} description={hint} />
  )

  const topupField = (name: 'min_topup' | 'max_topup', label: string, extraHint?: string) => {
    const shown = amount(name === 'min_topup' ? minText : maxText)
    return (
      <TextField
        control={form.control}
        name={name}
        label={label}
        description={[shown && t('groups:form.quotaHint', { amount: shown }), extraHint].filter(Boolean).join(' ')}
        type="number"
        min={0}
        step={1}
        inputMode="numeric"
        disabled={!promotion}
      />
    )
  }

  return (
    <FormDialog
      {...dialog}
      title={group ? t('groups:form.editTitle') : t('groups:form.createTitle')}
      description={t('groups:form.description')}
      testId="group-form"
      className="max-w-xl"
    >
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField
          control={form.control}
          name="symbol"
          label={t('groups:form.symbol')}
          description={t('groups:form.symbolHint')}
          autoComplete="off"
          placeholder="vip"
          disabled={group !== undefined}
        />
        <TextField control={form.control} name="name" label={t('groups:form.name')} autoComplete="off" placeholder={t('groups:form.namePlaceholder')} />
        <TextField
          control={form.control}
          name="ratio"
          label={t('groups:form.ratio')}
          description={t('groups:form.ratioHint')}
          type="number"
          min={0}
          step="any"
          inputMode="decimal"
        />
        <TextField
          control={form.control}
          name="api_rate"
          label={t('groups:form.apiRate')}
          description={t('groups:form.apiRateHint')}
          type="number"
          min={0}
          max={API_RATE_MAX}
          step={1}
          inputMode="numeric"
        />
      </div>
      <div className="grid gap-3 sm:grid-cols-2">
        {switchField('public', t('groups:form.public'), t('groups:form.publicHint'))}
        {switchField('enabled', t('groups:form.enabled'), t('groups:form.enabledHint'))}
      </div>
      {switchField('promotion', t('groups:form.promotion'), t('groups:form.promotionHint'))}
      <div className="grid gap-4 sm:grid-cols-2">
        {topupField('min_topup', t('groups:form.minTopup'))}
        {topupField(
          'max_topup',
          t('groups:form.maxTopup'),
          maxText.trim() === '0' ? t('groups:form.noUpperBound') : undefined,
        )}
      </div>
      {promotion && /^\d+$/.test(minText.trim()) && (
        <p className="text-sm text-muted-foreground" data-testid="group-promotion-summary">
          {maxText.trim() === '0' || !/^\d+$/.test(maxText.trim())
            ? t('groups:range.from', { min: renderQuota(Number(minText), display) })
            : t('groups:range.between', {
                min: renderQuota(Number(minText), display),
                max: renderQuota(Number(maxText), display),
              })}
        </p>
      )}
    </FormDialog>
  )
}
