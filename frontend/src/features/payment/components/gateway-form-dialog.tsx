import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm, useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { GatewayIcon } from '@/components/gateway-icon'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { Switch } from '@/components/ui/switch'
import { formatPercent } from '@/lib/money'
import { notify } from '@/lib/toast'
import { useCreateGateway } from '../api/create-gateway'
import { useUpdateGateway } from '../api/update-gateway'
import { createGatewaySchema, gatewayFormDefaults, isHttpOrigin, type GatewayFormValues } from '../schemas'
import { CURRENCIES, EPAY_PAY_TYPES, GATEWAY_TYPES, type Gateway, type GatewayPayload } from '../types'
import { StripeWebhookField } from './stripe-webhook'

export interface GatewayFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The gateway to edit; none creates one. */
  gateway?: Gateway
}

type TextName = 'name' | 'icon' | 'fixed_fee' | 'percent_fee' | 'notify_domain' | 'sort' | 'url' | 'pid'
type SecretName = 'key' | 'secret_key' | 'webhook_secret'

/**
 * Create or edit a payment gateway (epay or Stripe); the provider fieldset follows the chosen
 * type. Secrets are write-only: blank when editing keeps the stored one, unless the type changes.
 */
export function GatewayFormDialog({ open, onOpenChange, gateway }: GatewayFormDialogProps) {
  const { t } = useTranslation()
  const editing = gateway !== undefined
  const storedType = gateway?.type
  const schema = useMemo(() => createGatewaySchema(t, { storedType }), [t, storedType])
  const form = useForm<GatewayFormValues, unknown, GatewayPayload>({
    resolver: zodResolver(schema),
    defaultValues: gatewayFormDefaults(gateway),
  })
  const createMutation = useCreateGateway()
  const updateMutation = useUpdateGateway()
  const pending = createMutation.isPending || updateMutation.isPending

  useEffect(() => {
    if (open) form.reset(gatewayFormDefaults(gateway))
  }, [open, gateway, form])

  const [icon, percentText, type, currency, notifyDomain] = useWatch({
    control: form.control,
    name: ['icon', 'percent_fee', 'type', 'currency', 'notify_domain'],
  })
  const percent = /^\d+(\.\d+)?$/.test(percentText.trim()) ? formatPercent(Number(percentText)) : undefined
  // Stored secrets are kept (blank) only while the gateway keeps its type.
  const keeps = gateway !== undefined && type === gateway.type
  const secretsSet: Partial<Record<SecretName, boolean>> = gateway?.secrets_set ?? {}
  const secretHint = (name: SecretName, createHint: string) =>
    keeps ? (secretsSet[name] ? t('payment:form.keySet') : t('payment:form.keyNotSet')) : createHint
  // The webhook address follows the callback address being typed, once it is a valid one.
  const typedDomain = notifyDomain.trim()
  const webhookDomain = typedDomain === '' || isHttpOrigin(typedDomain) ? typedDomain : (gateway?.notify_domain ?? '')

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      if (gateway) {
        await updateMutation.mutateAsync({ id: gateway.id, ...payload })
        notify.success(t('payment:toast.updated'))
      } else {
        await createMutation.mutateAsync(payload)
        notify.success(t('payment:toast.created'))
      }
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })

  const textField = (
    name: TextName,
    label: string,
    { hint, placeholder, numeric }: { hint?: string; placeholder?: string; numeric?: 'decimal' | 'whole' } = {},
  ) => (
    <FormField
      control={form.control}
      name={name}
      render={({ field }) => (
        <FormItem>
          <FormLabel>{label}</FormLabel>
          <FormControl>
            {numeric ? (
              <Input
                type="number"
                min={0}
                step={numeric === 'whole' ? 1 : 'any'}
                inputMode={numeric === 'whole' ? 'numeric' : 'decimal'}
                {...field}
              />
            ) : (
              <Input autoComplete="off" spellCheck={false} placeholder={placeholder} {...field} />
            )}
          </FormControl>
          {hint && <FormDescription>{hint}</FormDescription>}
          <FormMessage />
        </FormItem>
      )}
    />
  )

  const secretField = (
    name: SecretName,
    label: string,
    {
      placeholder,
      hint,
      hintTestId,
      autoComplete,
    }: { placeholder: string; hint: string; hintTestId: string; autoComplete: 'off' | 'new-password' },
  ) => (
    <FormField
      control={form.control}
      name={name}
      render={({ field }) => (
        <FormItem className="sm:col-span-2">
          <FormLabel>{label}</FormLabel>
          <FormControl>
            <Input
              type="password"
              autoComplete={autoComplete}
              spellCheck={false}
              placeholder={keeps ? t('payment:form.keyKeep') : placeholder}
              {...field}
            />
          </FormControl>
          <FormDescription data-testid={hintTestId}>{hint}</FormDescription>
          <FormMessage />
        </FormItem>
      )}
    />
  )

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-2xl" data-testid="gateway-form-dialog">
        <DialogHeader>
          <DialogTitle>{editing ? t('payment:form.editTitle') : t('payment:form.createTitle')}</DialogTitle>
          <DialogDescription>{t('payment:form.description')}</DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="gateway-form">
            <div className="grid gap-4 sm:grid-cols-2">
              {textField('name', t('payment:form.name'), { placeholder: t('payment:form.namePlaceholder') })}
              <FormField
                control={form.control}
                name="type"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('payment:form.type')}</FormLabel>
                    <FormControl>
                      <NativeSelect {...field}>
                        {GATEWAY_TYPES.map((type) => (
                          <option key={type} value={type}>
                            {t(`payment:types.${type}`)}
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
                name="icon"
                render={({ field }) => (
                  <FormItem className="sm:col-span-2">
                    <FormLabel>{t('payment:form.icon')}</FormLabel>
                    <div className="flex items-center gap-2">
                      <span className="flex size-9 shrink-0 items-center justify-center rounded-md border">
                        <GatewayIcon icon={icon} />
                      </span>
                      <FormControl>
                        <Input autoComplete="off" spellCheck={false} placeholder="https://…/alipay.png" {...field} />
                      </FormControl>
                    </div>
                    <FormDescription>{t('payment:form.iconHint')}</FormDescription>
                    <FormMessage />
                  </FormItem>
                )}
              />
              <FormField
                control={form.control}
                name="currency"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('payment:form.currency')}</FormLabel>
                    <FormControl>
                      <NativeSelect {...field}>
                        {CURRENCIES.map((c) => (
                          <option key={c} value={c}>
                            {t(`payment:currencies.${c}`)}
                          </option>
                        ))}
                      </NativeSelect>
                    </FormControl>
                    <FormDescription>{t('payment:form.currencyHint')}</FormDescription>
                    <FormMessage />
                  </FormItem>
                )}
              />
              {textField('sort', t('payment:form.sort'), { numeric: 'whole', hint: t('payment:form.sortHint') })}
              {textField('fixed_fee', t('payment:form.fixedFee'), { numeric: 'decimal', hint: t('payment:form.fixedFeeHint') })}
              {textField('percent_fee', t('payment:form.percentFee'), {
                numeric: 'decimal',
                hint: [t('payment:form.percentFeeHint'), percent && t('payment:form.percentFeeNow', { percent })]
                  .filter(Boolean)
                  .join(' '),
              })}
            </div>

            {type === 'stripe' ? (
              <fieldset
                key="stripe"
                className="grid gap-4 rounded-lg border p-3 sm:grid-cols-2"
                data-testid="gateway-stripe-fields"
              >
                <legend className="px-1 text-sm font-medium">{t('payment:form.stripe')}</legend>
                {secretField('secret_key', t('payment:form.secretKey'), {
                  placeholder: 'sk_live_…',
                  hint: secretHint('secret_key', t('payment:form.secretKeyHint')),
                  hintTestId: 'gateway-secret-key-hint',
                  autoComplete: 'off',
                })}
                {secretField('webhook_secret', t('payment:form.webhookSecret'), {
                  placeholder: 'whsec_…',
                  hint: secretHint('webhook_secret', t('payment:form.webhookSecretHint')),
                  hintTestId: 'gateway-webhook-secret-hint',
                  autoComplete: 'off',
                })}
                <p className="text-sm text-muted-foreground sm:col-span-2" data-testid="gateway-stripe-currency">
                  {t('payment:form.stripeCurrencyHint', { currency })}
                </p>
                <div className="sm:col-span-2">
                  {gateway ? (
                    <StripeWebhookField gateway={{ uuid: gateway.uuid, notify_domain: webhookDomain }} />
                  ) : (
                    <p className="text-sm text-muted-foreground" data-testid="stripe-webhook-later">
                      {t('payment:webhook.afterCreate')}
                    </p>
                  )}
                </div>
              </fieldset>
            ) : (
              <fieldset
                key="epay"
                className="grid gap-4 rounded-lg border p-3 sm:grid-cols-2"
                data-testid="gateway-epay-fields"
              >
                <legend className="px-1 text-sm font-medium">{t('payment:form.epay')}</legend>
                <div className="sm:col-span-2">
                  {textField('url', t('payment:form.url'), {
                    placeholder: 'https://pay.example.com',
                    hint: t('payment:form.urlHint'),
                  })}
                </div>
                {textField('pid', t('payment:form.pid'))}
                <FormField
                  control={form.control}
                  name="pay_type"
                  render={({ field }) => (
                    <FormItem>
                      <FormLabel>{t('payment:form.payType')}</FormLabel>
                      <FormControl>
                        <NativeSelect {...field}>
                          {EPAY_PAY_TYPES.map((p) => (
                            <option key={p || 'any'} value={p}>
                              {t(`payment:payTypes.${p || 'any'}`)}
                            </option>
                          ))}
                        </NativeSelect>
                      </FormControl>
                      <FormMessage />
                    </FormItem>
                  )}
                />
                {secretField('key', t('payment:form.key'), {
                  placeholder: t('payment:form.keyPlaceholder'),
                  hint: secretHint('key', t('payment:form.keyHint')),
                  hintTestId: 'gateway-key-hint',
                  autoComplete: 'new-password',
                })}
              </fieldset>
            )}

            {textField('notify_domain', t('payment:form.notifyDomain'), {
              placeholder: 'https://pay.example.com',
              hint: t('payment:form.notifyDomainHint'),
            })}

            <FormField
              control={form.control}
              name="enable"
              render={({ field }) => (
                <FormItem className="flex items-start gap-3 rounded-lg border p-3">
                  <FormControl>
                    <Switch checked={field.value} onCheckedChange={field.onChange} />
                  </FormControl>
                  <div className="grid gap-1">
                    <FormLabel>{t('payment:form.enable')}</FormLabel>
                    <FormDescription className="text-xs">{t('payment:form.enableHint')}</FormDescription>
                  </div>
                </FormItem>
              )}
            />

            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={pending} data-testid="gateway-form-submit">
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
