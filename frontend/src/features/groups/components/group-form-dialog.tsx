import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm, useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { Spinner } from '@/components/ui/spinner'
import { Switch } from '@/components/ui/switch'
import { renderQuota } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
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
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const schema = useMemo(() => createGroupSchema(t), [t])
  const form = useForm<GroupFormValues, unknown, GroupPayload>({
    resolver: zodResolver(schema),
    defaultValues: groupFormDefaults(group),
  })
  const createMutation = useCreateGroup()
  const updateMutation = useUpdateGroup()
  const pending = createMutation.isPending || updateMutation.isPending

  useEffect(() => {
    if (open) form.reset(groupFormDefaults(group))
  }, [open, group, form])

  const [promotion, minText, maxText] = useWatch({
    control: form.control,
    name: ['promotion', 'min_topup', 'max_topup'],
  })
  const amount = (text: string) => (/^\d+$/.test(text.trim()) ? renderQuota(Number(text), display) : undefined)

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      if (group) {
        // The symbol is sent unchanged (the server refuses a different one).
        await updateMutation.mutateAsync({ id: group.id, ...payload, symbol: group.symbol })
        notify.success(t('groups:toast.updated'))
      } else {
        await createMutation.mutateAsync(payload)
        notify.success(t('groups:toast.created'))
      }
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })

  const switchField = (name: SwitchName, label: string, hint: string) => (
    <FormField
      control={form.control}
      name={name}
      render={({ field }) => (
        <FormItem className="flex items-start gap-3 rounded-lg border p-3">
          <FormControl>
            <Switch checked={field.value} onCheckedChange={field.onChange} />
          </FormControl>
          <div className="grid gap-1">
            <FormLabel>{label}</FormLabel>
            <FormDescription className="text-xs">{hint}</FormDescription>
          </div>
        </FormItem>
      )}
    />
  )

  const topupField = (name: 'min_topup' | 'max_topup', label: string, extraHint?: string) => (
    <FormField
      control={form.control}
      name={name}
      render={({ field }) => {
        const shown = amount(field.value)
        return (
          <FormItem>
            <FormLabel>{label}</FormLabel>
            <FormControl>
              <Input type="number" min={0} step={1} inputMode="numeric" disabled={!promotion} {...field} />
            </FormControl>
            <FormDescription>
              {[shown && t('groups:form.quotaHint', { amount: shown }), extraHint].filter(Boolean).join(' ')}
            </FormDescription>
            <FormMessage />
          </FormItem>
        )
      }}
    />
  )

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-xl" data-testid="group-form-dialog">
        <DialogHeader>
          <DialogTitle>{group ? t('groups:form.editTitle') : t('groups:form.createTitle')}</DialogTitle>
          <DialogDescription>{t('groups:form.description')}</DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="group-form">
            <div className="grid gap-4 sm:grid-cols-2">
              <FormField
                control={form.control}
                name="symbol"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('groups:form.symbol')}</FormLabel>
                    <FormControl>
                      <Input autoComplete="off" placeholder="vip" disabled={group !== undefined} {...field} />
                    </FormControl>
                    <FormDescription>{t('groups:form.symbolHint')}</FormDescription>
                    <FormMessage />
                  </FormItem>
                )}
              />
              <FormField
                control={form.control}
                name="name"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('groups:form.name')}</FormLabel>
                    <FormControl>
                      <Input autoComplete="off" placeholder={t('groups:form.namePlaceholder')} {...field} />
                    </FormControl>
                    <FormMessage />
                  </FormItem>
                )}
              />
              <FormField
                control={form.control}
                name="ratio"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('groups:form.ratio')}</FormLabel>
                    <FormControl>
                      <Input type="number" min={0} step="any" inputMode="decimal" {...field} />
                    </FormControl>
                    <FormDescription>{t('groups:form.ratioHint')}</FormDescription>
                    <FormMessage />
                  </FormItem>
                )}
              />
              <FormField
                control={form.control}
                name="api_rate"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('groups:form.apiRate')}</FormLabel>
                    <FormControl>
                      <Input type="number" min={0} max={API_RATE_MAX} step={1} inputMode="numeric" {...field} />
                    </FormControl>
                    <FormDescription>{t('groups:form.apiRateHint')}</FormDescription>
                    <FormMessage />
                  </FormItem>
                )}
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
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={pending} data-testid="group-form-submit">
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
