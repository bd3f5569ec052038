import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo, type ReactNode } from 'react'
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
import { Textarea } from '@/components/ui/textarea'
import { formatPercent } from '@/lib/money'
import { useUser } from '@/stores/session'
import { ROLE } from '@/types/api'
import { notify } from '@/lib/toast'
import { useCreateGateway } from '../api/create-gateway'
import { useUpdateGateway } from '../api/update-gateway'
import { createGatewaySchema, gatewayFormDefaults, isHttpOrigin, type GatewayFormValues } from '../schemas'
import {
  ALIPAY_MODES,
  CURRENCIES,
  EPAY_PAY_TYPES,
  GATEWAY_TYPES,
  chargesInCnyOnly,
  type Gateway,
  type GatewayPayload,
} from '../types'
import { StripeWebhookField } from './stripe-webhook'

export interface GatewayFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The gateway to edit; none creates one. */
  gateway?: Gateway
}

type TextName =
  | 'name'
  | 'icon'
  | 'fixed_fee'
  | 'percent_fee'
  | 'notify_domain'
  | 'sort'
  | 'url'
  | 'pid'
  | 'alipay_app_id'
  | 'wxpay_mch_id'
  | 'wxpay_app_id'
  | 'wxpay_serial_no'
  | 'wxpay_platform_key_id'
/** Secrets typed on one line (masked). */
type SecretName = 'key' | 'secret_key' | 'webhook_secret' | 'wxpay_api_v3_key'
/** Keys pasted as PEM or base64 (several lines). */
type KeyTextName = 'alipay_public_key' | 'alipay_private_key' | 'wxpay_platform_public_key' | 'wxpay_private_key'
/** The write-only ones among them. */
type PrivateKeyName = 'alipay_private_key' | 'wxpay_private_key'

/** Each write-only form field's name in the listed gateway's `secrets_set`. */
const SECRET_SET_NAME: Record<SecretName | PrivateKeyName, string> = {
  key: 'key',
  secret_key: 'secret_key',
  webhook_secret: 'webhook_secret',
  wxpay_api_v3_key: 'api_v3_key',
  alipay_private_key: 'private_key',
  wxpay_private_key: 'private_key',
}

/**
 * Create or edit a payment gateway (epay, Stripe, Alipay or WeChat Pay); the provider fieldset
 * follows the chosen type. Secrets are write-only: blank when editing keeps the stored one, unless
 * the type changes. Alipay and WeChat Pay charge in CNY only: choosing them sets the currency.
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
  // Only root reads secrets, so only root moves a stored one to a new destination or changes what
  // a top-up costs (the server refuses it otherwise: `destination_needs_root`, `root_only_setting`).
  const isRoot = useUser()?.role === ROLE.root
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
  const secretsSet: Partial<Record<string, boolean>> = gateway?.secrets_set ?? {}
  const secretHint = (name: SecretName | PrivateKeyName, createHint: string) =>
    keeps ? (secretsSet[SECRET_SET_NAME[name]] ? t('payment:form.keySet') : t('payment:form.keyNotSet')) : createHint
  const cnyOnly = chargesInCnyOnly(type)
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

  // A key pasted as PEM or base64: several lines; a write-only one says when blank keeps it.
  const keyTextField = (
    name: KeyTextName,
    label: string,
    { placeholder, hint, hintTestId, writeOnly = false }: { placeholder: string; hint: string; hintTestId: string; writeOnly?: boolean },
  ) => (
    <FormField
      control={form.control}
      name={name}
      render={({ field }) => (
        <FormItem className="sm:col-span-2">
          <FormLabel>{label}</FormLabel>
          <FormControl>
            <Textarea
              rows={4}
              autoComplete="off"
              spellCheck={false}
              className="font-mono text-xs"
              placeholder={writeOnly && keeps ? t('payment:form.keyKeep') : placeholder}
              {...field}
            />
          </FormControl>
          <FormDescription data-testid={hintTestId}>{hint}</FormDescription>
          <FormMessage />
        </FormItem>
      )}
    />
  )

  // Alipay and WeChat Pay are told the notification address with each order.
  const notifyAutoHint = (provider: string) => (
    <p className="text-sm text-muted-foreground sm:col-span-2" data-testid="gateway-notify-auto">
      {t('payment:form.notifyAuto', { provider })}
    </p>
  )

  let providerFields: ReactNode
  switch (type) {
    case 'stripe':
      providerFields = (
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
      )
      break
    case 'alipay':
      providerFields = (
        <fieldset
          key="alipay"
          className="grid gap-4 rounded-lg border p-3 sm:grid-cols-2"
          data-testid="gateway-alipay-fields"
        >
          <legend className="px-1 text-sm font-medium">{t('payment:form.alipay')}</legend>
          {textField('alipay_app_id', t('payment:form.alipayAppId'), {
            placeholder: '2021000123456789',
            hint: t('payment:form.alipayAppIdHint'),
          })}
          <FormField
            control={form.control}
            name="alipay_mode"
            render={({ field }) => (
              <FormItem>
                <FormLabel>{t('payment:form.alipayMode')}</FormLabel>
                <FormControl>
                  <NativeSelect {...field}>
                    {ALIPAY_MODES.map((m) => (
                      <option key={m} value={m}>
                        {t(`payment:alipayModes.${m}`)}
                      </option>
                    ))}
                  </NativeSelect>
                </FormControl>
                <FormDescription>{t('payment:form.alipayModeHint')}</FormDescription>
                <FormMessage />
              </FormItem>
            )}
          />
          {keyTextField('alipay_public_key', t('payment:form.alipayPublicKey'), {
            placeholder: '-----BEGIN PUBLIC KEY-----',
            hint: t('payment:form.alipayPublicKeyHint'),
            hintTestId: 'gateway-alipay-public-key-hint',
          })}
          {keyTextField('alipay_private_key', t('payment:form.alipayPrivateKey'), {
            placeholder: '-----BEGIN PRIVATE KEY-----',
            hint: secretHint('alipay_private_key', t('payment:form.alipayPrivateKeyHint')),
            hintTestId: 'gateway-alipay-private-key-hint',
            writeOnly: true,
          })}
          {notifyAutoHint(t('payment:types.alipay'))}
        </fieldset>
      )
      break
    case 'wxpay':
      providerFields = (
        <fieldset
          key="wxpay"
          className="grid gap-4 rounded-lg border p-3 sm:grid-cols-2"
          data-testid="gateway-wxpay-fields"
        >
          <legend className="px-1 text-sm font-medium">{t('payment:form.wxpay')}</legend>
          {textField('wxpay_mch_id', t('payment:form.mchId'), { placeholder: '1900000109', hint: t('payment:form.mchIdHint') })}
          {textField('wxpay_app_id', t('payment:form.wxpayAppId'), {
            placeholder: 'wx8888888888888888',
            hint: t('payment:form.wxpayAppIdHint'),
          })}
          {textField('wxpay_serial_no', t('payment:form.serialNo'), { hint: t('payment:form.serialNoHint') })}
          {textField('wxpay_platform_key_id', t('payment:form.platformKeyId'), {
            placeholder: 'PUB_KEY_ID_…',
            hint: t('payment:form.platformKeyIdHint'),
          })}
          {keyTextField('wxpay_platform_public_key', t('payment:form.platformPublicKey'), {
            placeholder: '-----BEGIN PUBLIC KEY-----',
            hint: t('payment:form.platformPublicKeyHint'),
            hintTestId: 'gateway-platform-public-key-hint',
          })}
          {keyTextField('wxpay_private_key', t('payment:form.wxpayPrivateKey'), {
            placeholder: '-----BEGIN PRIVATE KEY-----',
            hint: secretHint('wxpay_private_key', t('payment:form.wxpayPrivateKeyHint')),
            hintTestId: 'gateway-wxpay-private-key-hint',
            writeOnly: true,
          })}
          {secretField('wxpay_api_v3_key', t('payment:form.apiV3Key'), {
            placeholder: t('payment:form.apiV3KeyPlaceholder'),
            hint: secretHint('wxpay_api_v3_key', t('payment:form.apiV3KeyHint')),
            hintTestId: 'gateway-api-v3-key-hint',
            autoComplete: 'off',
          })}
          {notifyAutoHint(t('payment:types.wxpay'))}
          <p className="text-sm text-muted-foreground sm:col-span-2" data-testid="gateway-wxpay-https">
            {t('payment:form.wxpayHttps')}
          </p>
        </fieldset>
      )
      break
    default:
      providerFields = (
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
      )
  }

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
                      <NativeSelect
                        {...field}
                        onChange={(e) => {
                          field.onChange(e)
                          // Alipay and WeChat Pay charge in yuan only.
                          if (chargesInCnyOnly(e.target.value)) form.setValue('currency', 'CNY')
                        }}
                      >
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
                      <NativeSelect {...field} disabled={cnyOnly}>
                        {CURRENCIES.map((c) => (
                          <option key={c} value={c}>
                            {t(`payment:currencies.${c}`)}
                          </option>
                        ))}
                      </NativeSelect>
                    </FormControl>
                    <FormDescription data-testid="gateway-currency-hint">
                      {cnyOnly
                        ? `${t('payment:form.cnyOnly', { type: t(`payment:types.${type}`) })} ${t('payment:form.currencyHint')}`
                        : t('payment:form.currencyHint')}
                    </FormDescription>
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

            {editing && !isRoot && (
              <p
                className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
                role="note"
                data-testid="gateway-form-destination-hint"
              >
                {t('payment:form.destinationNeedsKeyHint')}
              </p>
            )}

            {providerFields}

            {textField('notify_domain', t('payment:form.notifyDomain'), {
              placeholder: 'https://pay.example.com',
              hint: type === 'wxpay' ? t('payment:form.notifyDomainHintWxpay') : t('payment:form.notifyDomainHint'),
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
