import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { FieldItem, FormDialog, SwitchField, TextField, useFormDialog } from '@/components/form-kit'
import { FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { renderQuota } from '@/lib/format'
import { useUser, useUserGroups } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import type { Token } from '@/types/api'
import { useCreateToken } from '../api/create-token'
import { useUpdateToken } from '../api/update-token'
import {
  API_RATE_MAX,
  createTokenSchema,
  HEARTBEAT_MAX,
  HEARTBEAT_MIN,
  parseQuotaText,
  tokenFormDefaults,
  type QuotaUnit,
  type TokenFormValues,
  type TokenPayload,
} from '../schemas'

export interface TokenFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The key to edit; none creates a new one. */
  token?: Token
  /** After a create: the answer, with the full key. */
  onCreated?: (token: Token) => void
}

/** Create or edit a key. Server refusals are toasted by the central handler; the form stays open. */
export function TokenFormDialog({ open, onOpenChange, token, onCreated }: TokenFormDialogProps) {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const unit = useMemo<QuotaUnit>(() => ({ dollars: display_in_currency, perUnit: quota_per_unit }), [display_in_currency, quota_per_unit])
  const schema = useMemo(() => createTokenSchema(t, Date.now, unit), [t, unit])
  // The groups the owner may bill a key to (GET /api/user_group_map, loaded at sign-in).
  const groups = useUserGroups()
  const ownGroup = useUser()?.group ?? ''
  const createMutation = useCreateToken()
  const updateMutation = useUpdateToken()
  const pending = createMutation.isPending || updateMutation.isPending
  const { form, dialog } = useFormDialog<TokenFormValues, TokenPayload>({
    open,
    onOpenChange,
    resolver: zodResolver(schema),
    defaults: () => tokenFormDefaults(token, unit),
    source: token,
    also: unit,
    save: async (payload) => {
      if (token) await updateMutation.mutateAsync({ id: token.id, ...payload })
      else onCreated?.(await createMutation.mutateAsync(payload))
    },
    told: token ? t('tokens:toast.updated') : t('tokens:toast.created'),
    pending,
  })

  const [unlimited, neverExpires, heartbeat, quotaText] = useWatch({
    control: form.control,
    name: ['unlimited_quota', 'never_expires', 'heartbeat_enabled', 'remain_quota'],
  })
  const typed = parseQuotaText(quotaText, unit)
  const quotaHint = Number.isNaN(typed)
    ? undefined
    : unit.dollars
      ? t('tokens:form.remainQuotaUnits', { units: typed.toLocaleString() })
      : t('tokens:form.remainQuotaHint', {
          amount: renderQuota(typed, { displayInCurrency: true, quotaPerUnit: quota_per_unit }),
        })

  const beside = 'flex items-center gap-2 sm:pt-7'
  return (
    <FormDialog
      {...dialog}
      title={token ? t('tokens:form.editTitle') : t('tokens:form.createTitle')}
      description={t('tokens:form.description')}
      testId="token-form"
      submitLabel={pending ? t('tokens:form.submitting') : t('tokens:form.submit')}
      className="max-w-xl"
    >
      <TextField control={form.control} name="name" label={t('tokens:form.name')} placeholder={t('tokens:form.namePlaceholder')} autoComplete="off" />
      <div className="grid gap-4 sm:grid-cols-[1fr_auto] sm:items-start">
        <FormField
          control={form.control}
          name="remain_quota"
          render={({ field }) => (
            <FormItem>
              <FormLabel>{t('tokens:form.remainQuota')}</FormLabel>
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
                    disabled={unlimited}
                    className={unit.dollars ? 'pl-7' : undefined}
                    {...field}
                  />
                </FormControl>
              </div>
              {quotaHint && !unlimited && <FormDescription>{quotaHint}</FormDescription>}
              <FormMessage />
            </FormItem>
          )}
        />
        <SwitchField control={form.control} name="unlimited_quota" label={t('tokens:form.unlimited')} inline className={beside} />
      </div>
      <div className="grid gap-4 sm:grid-cols-[1fr_auto] sm:items-start">
        <TextField control={form.control} name="expired_at" label={t('tokens:form.expiredAt')} type="datetime-local" disabled={neverExpires} />
        <SwitchField control={form.control} name="never_expires" label={t('tokens:form.neverExpires')} inline className={beside} />
      </div>
      {(['models', 'subnet'] as const).map((name) => (
        <TextField
          key={name}
          control={form.control}
          name={name}
          label={t(`tokens:form.${name}`)}
          description={t(`tokens:form.${name}Hint`)}
          placeholder={t(`tokens:form.${name}Placeholder`)}
          autoComplete="off"
        />
      ))}
      <div className="grid gap-4 sm:grid-cols-2 sm:items-start">
        <FieldItem control={form.control} name="group" label={t('tokens:form.group')} description={t('tokens:form.groupHint')}>
          {(field) => (
            <NativeSelect {...field} data-testid="token-form-group">
              <option value="">{t('tokens:form.groupOwn', { group: groups?.[ownGroup]?.name ?? ownGroup })}</option>
              {Object.entries(groups ?? {})
                .filter(([symbol]) => symbol !== ownGroup)
                .map(([symbol, g]) => (
                  <option key={symbol} value={symbol}>
                    {t('tokens:form.groupOption', { name: g.name || symbol, ratio: g.ratio })}
                  </option>
                ))}
              {/* A group no longer offered stays visible on the key that has it. */}
              {field.value && field.value !== ownGroup && !groups?.[field.value] && <option value={field.value}>{field.value}</option>}
            </NativeSelect>
          )}
        </FieldItem>
        <TextField
          control={form.control}
          name="api_rate"
          label={t('tokens:form.apiRate')}
          description={t('tokens:form.apiRateHint')}
          type="number"
          min={0}
          max={API_RATE_MAX}
          step={1}
          inputMode="numeric"
          data-testid="token-form-api-rate"
        />
      </div>
      <div className="grid gap-4 sm:grid-cols-[auto_1fr] sm:items-start">
        <SwitchField control={form.control} name="heartbeat_enabled" label={t('tokens:form.heartbeat')} inline className={beside} />
        <TextField
          control={form.control}
          name="heartbeat_timeout"
          label={t('tokens:form.heartbeatTimeout')}
          description={t('tokens:form.heartbeatHint')}
          type="number"
          min={HEARTBEAT_MIN}
          max={HEARTBEAT_MAX}
          step={1}
          inputMode="numeric"
          disabled={!heartbeat}
        />
      </div>
      <SwitchField
        control={form.control}
        name="cache_enabled"
        label={t('tokens:form.cache')}
        description={t('tokens:form.cacheHint')}
        className="flex items-start gap-2"
        descriptionClassName=""
        testId="token-form-cache"
      />
    </FormDialog>
  )
}
