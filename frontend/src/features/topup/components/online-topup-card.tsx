import { zodResolver } from '@hookform/resolvers/zod'
import { CircleCheckIcon, CircleXIcon, ClockIcon, CreditCardIcon, ExternalLinkIcon } from 'lucide-react'
import { useMemo, useState, type ReactNode } from 'react'
import { useForm, useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import { CopyField } from '@/components/copy-field'
import { GatewayIcon } from '@/components/gateway-icon'
import { ListState } from '@/components/list-kit'
import { QrCode } from '@/components/qr-code'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Form, FormControl, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { Spinner } from '@/components/ui/spinner'
import { useDebouncedValue } from '@/hooks/use-debounced-value'
import { errorText } from '@/lib/errors'
import { renderQuota } from '@/lib/format'
import { browser } from '@/lib/oauth'
import { discountOff, formatFees, formatMoney } from '@/lib/money'
import { notify } from '@/lib/toast'
import { cn } from '@/lib/utils'
import { useSiteInfo } from '@/stores/site'
import { useCreateOrder } from '../api/create-order'
import { usePaymentGateways } from '../api/get-payment-gateways'
import { useQuote } from '../api/get-quote'
import { useOrderPolling, type PollOutcome } from '../api/poll-order'
import { amountIssue, createOnlineTopupSchema, minAmountOf, type OnlineTopupValues } from '../schemas'
import type { CreatedOrder, PaymentGateway } from '../types'

/** The order being paid: just created here, or only its number when the gateway sent the payer back. */
type WaitingOrder = Pick<CreatedOrder, 'trade_no'> &
  Partial<CreatedOrder> & {
    /** The type of the gateway it was placed through (e.g. alipay, wxpay): what to scan its code with. */
    gatewayType?: string
  }

/** How long typing must pause before a quote is asked for. */
export const QUOTE_DEBOUNCE_MS = 400

const PRESETS = [10, 20, 50, 100, 200, 500]

export interface OnlineTopupCardProps {
  /** After an order is paid (the page refreshes the signed-in user's balance). */
  onPaid?: () => void
}

/**
 * Online top-up: an amount in USD and a gateway, the quote (discount, fee, total in the
 * gateway's currency) before paying, then the gateway's page in a new tab, or the code to scan
 * with the payer's app (Alipay, WeChat Pay), while the order's status is polled. The gateway sends the payer back to `/panel/topup?trade_no=…`: that order's
 * status is polled too. Without an enabled gateway: the operator's top-up link, or a note.
 */
export function OnlineTopupCard({ onPaid }: OnlineTopupCardProps) {
  const { t } = useTranslation()
  const { top_up_link } = useSiteInfo()
  const gateways = usePaymentGateways()
  const [searchParams, setSearchParams] = useSearchParams()
  const [order, setOrder] = useState<WaitingOrder | null>(() => {
    const tradeNo = searchParams.get('trade_no')?.trim()
    return tradeNo ? { trade_no: tradeNo } : null
  })
  const list = gateways.data ?? []

  // Once the order is settled, a reload must not ask about it again.
  const forgetReturn = () => {
    if (searchParams.has('trade_no')) {
      setSearchParams(
        (prev) => {
          const next = new URLSearchParams(prev)
          next.delete('trade_no')
          return next
        },
        { replace: true },
      )
    }
  }
  const closeOrder = () => {
    setOrder(null)
    forgetReturn()
  }

  let body: ReactNode
  if (order) {
    body = <PaymentWaiting order={order} onClose={closeOrder} onSettled={forgetReturn} onPaid={onPaid} />
  } else if (gateways.isPending || gateways.isError) {
    body = (
      <ListState loading={gateways.isPending} query={gateways} empty={false} emptyText="" emptyTestId="topup-gateways">
        {null}
      </ListState>
    )
  } else if (list.length === 0) {
    body = top_up_link ? (
      <Button
        variant="outline"
        onClick={() => window.open(top_up_link, '_blank', 'noopener,noreferrer')}
        data-testid="topup-online"
      >
        <ExternalLinkIcon />
        {t('topup:online.button')}
      </Button>
    ) : (
      // Nothing to pay with online: say so, and where to go instead.
      <p className="rounded-md border border-dashed p-3 text-sm text-muted-foreground" data-testid="topup-online-none">
        {t('topup:online.none')}
      </p>
    )
  } else {
    body = <OnlineTopupForm gateways={list} onCreated={setOrder} />
  }

  return (
    <Card data-testid="topup-online-card">
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          <CreditCardIcon className="size-5 text-muted-foreground" aria-hidden />
          {t('topup:online.title')}
        </CardTitle>
        <CardDescription>{t('topup:online.description')}</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-4">{body}</CardContent>
    </Card>
  )
}

/** A gateway's page address, if it is one a browser may be sent to (http or https). */
function pageUrl(url: string): string | undefined {
  return /^https?:\/\//i.test(url.trim()) ? url.trim() : undefined
}

/** A payment code as a link for the payer's apps (weixin://…, https://…); never a script. */
function contentLink(content: string): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(content.trim())?.[1]?.toLowerCase()
  return scheme && !['javascript', 'data', 'vbscript', 'file'].includes(scheme) ? content.trim() : undefined
}

/** Opens the gateway's page in a new tab, or in this one when the browser blocks the new tab. */
function openPaymentPage(raw: string): void {
  const url = pageUrl(raw)
  if (!url) return
  const tab = browser.open(url)
  if (tab) tab.opener = null
  else browser.assign(url)
}

function OnlineTopupForm({
  gateways,
  onCreated,
}: {
  gateways: PaymentGateway[]
  onCreated: (order: WaitingOrder) => void
}) {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit, payment_min_amount } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const min = minAmountOf(payment_min_amount)
  const schema = useMemo(() => createOnlineTopupSchema(t, min), [t, min])
  const form = useForm<OnlineTopupValues, unknown, { amount: number; uuid: string }>({
    resolver: zodResolver(schema),
    mode: 'onChange',
    defaultValues: { amount: '', uuid: gateways[0]?.uuid ?? '' },
  })
  const create = useCreateOrder()

  const [amountText, uuid] = useWatch({ control: form.control, name: ['amount', 'uuid'] })
  const typed = amountText.trim()
  const debounced = useDebouncedValue(typed, QUOTE_DEBOUNCE_MS)
  const gateway = gateways.find((g) => g.uuid === uuid)
  const quoteable = gateway !== undefined && amountIssue(debounced, min, t) === undefined
  const quote = useQuote(uuid, Number(debounced), quoteable)
  // The quote on screen is for what is typed now, not for an earlier amount.
  const current = quoteable && debounced === typed && quote.data !== undefined && !quote.isFetching
  const presets = PRESETS.filter((p) => p >= min)

  const onSubmit = form.handleSubmit(async (body) => {
    try {
      const created = await create.mutateAsync(body)
      if (created.pay.type === 'redirect') openPaymentPage(created.pay.url)
      onCreated({ ...created, gatewayType: gateways.find((g) => g.uuid === body.uuid)?.type })
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <Form {...form}>
      <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="topup-online-form">
        <FormField
          control={form.control}
          name="amount"
          render={({ field }) => (
            <FormItem>
              <FormLabel>{t('topup:online.amount')}</FormLabel>
              <div className="relative">
                <span className="pointer-events-none absolute inset-y-0 left-3 flex items-center text-sm text-muted-foreground">
                  $
                </span>
                <FormControl>
                  <Input
                    type="number"
                    min={min}
                    max={1_000_000}
                    step={1}
                    inputMode="numeric"
                    className="pl-7"
                    placeholder={t('topup:online.amountPlaceholder', { min })}
                    {...field}
                  />
                </FormControl>
              </div>
              {presets.length > 0 && (
                <div className="flex flex-wrap gap-2">
                  {presets.map((p) => (
                    <Button
                      key={p}
                      type="button"
                      size="sm"
                      variant={typed === String(p) ? 'default' : 'outline'}
                      onClick={() => form.setValue('amount', String(p), { shouldValidate: true, shouldDirty: true })}
                      data-testid={`topup-preset-${p}`}
                    >
                      ${p}
                    </Button>
                  ))}
                </div>
              )}
              <FormMessage />
            </FormItem>
          )}
        />

        <FormField
          control={form.control}
          name="uuid"
          render={({ field }) => (
            <FormItem>
              <div id="topup-gateway-label" className="text-sm leading-none font-medium">
                {t('topup:online.gateway')}
              </div>
              <div role="radiogroup" aria-labelledby="topup-gateway-label" className="grid gap-2 sm:grid-cols-2">
                {gateways.map((g) => {
                  const selected = field.value === g.uuid
                  const fees = formatFees(g)
                  return (
                    <button
                      key={g.uuid}
                      type="button"
                      role="radio"
                      aria-checked={selected}
                      onClick={() => field.onChange(g.uuid)}
                      className={cn(
                        'flex items-center gap-3 rounded-lg border p-3 text-left text-sm transition-colors outline-none',
                        'hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring',
                        selected && 'border-primary bg-primary/5 ring-1 ring-primary',
                      )}
                      data-testid={`topup-gateway-${g.uuid}`}
                    >
                      <GatewayIcon icon={g.icon} className="size-6" />
                      <span className="grid min-w-0">
                        <span className="truncate font-medium">{g.name}</span>
                        <span className="text-xs text-muted-foreground">
                          {fees ? t('topup:online.fee', { fee: fees }) : t('topup:online.noFee')}
                        </span>
                      </span>
                    </button>
                  )
                })}
              </div>
              <FormMessage />
            </FormItem>
          )}
        />

        <div className="rounded-lg border bg-muted/30 p-3 text-sm" aria-live="polite" data-testid="topup-quote-box">
          {!quoteable || debounced !== typed ? (
            <p className="text-muted-foreground">{t('topup:quote.hint')}</p>
          ) : quote.isError ? (
            <p className="text-destructive" role="alert" data-testid="topup-quote-error">
              {errorText(quote.error)}
            </p>
          ) : !current || !quote.data ? (
            <p className="flex items-center gap-2 text-muted-foreground">
              <Spinner />
              {t('topup:quote.loading')}
            </p>
          ) : (
            <dl className="grid grid-cols-2 gap-x-4 gap-y-1.5" data-testid="topup-quote">
              <dt className="text-muted-foreground">{t('topup:quote.amount')}</dt>
              <dd className="text-right tabular-nums">{formatMoney(quote.data.amount, 'USD')}</dd>
              <dt className="text-muted-foreground">{t('topup:quote.quota')}</dt>
              <dd className="text-right tabular-nums" data-testid="topup-quote-quota">
                {renderQuota(quote.data.quota, display)}
              </dd>
              <dt className="text-muted-foreground">{t('topup:quote.discount')}</dt>
              <dd className="text-right tabular-nums" data-testid="topup-quote-discount">
                {(() => {
                  const off = discountOff(quote.data.discount)
                  return off ? t('topup:quote.discountOff', { off }) : t('topup:quote.noDiscount')
                })()}
              </dd>
              <dt className="text-muted-foreground">{t('topup:quote.fee')}</dt>
              <dd className="text-right tabular-nums" data-testid="topup-quote-fee">
                {formatMoney(quote.data.fee, quote.data.currency)}
              </dd>
              <dt className="font-medium">{t('topup:quote.total')}</dt>
              <dd className="text-right text-base font-semibold tabular-nums" data-testid="topup-quote-total">
                {formatMoney(quote.data.order_amount, quote.data.currency)}
              </dd>
            </dl>
          )}
        </div>

        <Button type="submit" disabled={!current || create.isPending} data-testid="topup-pay">
          {create.isPending && <Spinner />}
          {create.isPending
            ? t('topup:pay.creating')
            : current && quote.data
              ? t('topup:pay.submitAmount', { amount: formatMoney(quote.data.order_amount, quote.data.currency) })
              : t('topup:pay.submit')}
        </Button>
      </form>
    </Form>
  )
}

const TONES = {
  success:
    'border-emerald-200 bg-emerald-50 text-emerald-900 dark:border-emerald-900 dark:bg-emerald-950/40 dark:text-emerald-100',
  warning: 'border-amber-200 bg-amber-50 text-amber-900 dark:border-amber-900 dark:bg-amber-950/40 dark:text-amber-100',
  error: 'border-destructive/30 bg-destructive/5 text-destructive',
} as const

/** After the order: how to pay it, and its status, polled until it is settled. */
function PaymentWaiting({
  order,
  onClose,
  onSettled,
  onPaid,
}: {
  order: WaitingOrder
  onClose: () => void
  /** The order is paid (in time or late), expired or failed. */
  onSettled?: () => void
  onPaid?: () => void
}) {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const [outcome, setOutcome] = useState<PollOutcome | null>(null)

  // Back from the gateway's page (no payment action here): ask at once.
  const returned = order.pay === undefined
  useOrderPolling(
    outcome ? null : order.trade_no,
    (o) => {
      setOutcome(o)
      if (o.kind === 'paid' || o.kind === 'paid_late' || o.kind === 'expired' || o.kind === 'failed') onSettled?.()
      if (o.kind === 'paid' || o.kind === 'paid_late') {
        notify.success(t('topup:pay.paidToast', { amount: renderQuota(o.quota, display) }))
        onPaid?.()
      }
    },
    { immediate: returned },
  )

  const outcomeView = (o: PollOutcome): { icon: ReactNode; tone: keyof typeof TONES; text: string } => {
    const iconClass = 'mt-0.5 size-4 shrink-0'
    switch (o.kind) {
      case 'paid':
        return {
          icon: <CircleCheckIcon className={iconClass} aria-hidden />,
          tone: 'success',
          text: t('topup:pay.paid', { amount: renderQuota(o.quota, display) }),
        }
      case 'paid_late':
        return {
          icon: <CircleCheckIcon className={iconClass} aria-hidden />,
          tone: 'success',
          text: t('topup:pay.paidLate', { amount: renderQuota(o.quota, display) }),
        }
      case 'expired':
        return { icon: <ClockIcon className={iconClass} aria-hidden />, tone: 'warning', text: t('topup:pay.expired') }
      case 'failed':
        return { icon: <CircleXIcon className={iconClass} aria-hidden />, tone: 'error', text: t('topup:pay.failed') }
      case 'timeout':
        return { icon: <ClockIcon className={iconClass} aria-hidden />, tone: 'warning', text: t('topup:pay.timeout') }
      case 'error':
        return {
          icon: <CircleXIcon className={iconClass} aria-hidden />,
          tone: 'error',
          text: t('topup:pay.statusFailed', { message: errorText(o.error) }),
        }
    }
  }

  const summary = (
    <dl className="grid grid-cols-2 gap-x-4 gap-y-1.5 text-sm">
      <dt className="text-muted-foreground">{t('topup:pay.tradeNo')}</dt>
      <dd className="truncate text-right font-mono text-xs leading-5" data-testid="topup-order-trade-no">
        {order.trade_no}
      </dd>
      {order.order_amount !== undefined && order.currency !== undefined && (
        <>
          <dt className="text-muted-foreground">{t('topup:quote.total')}</dt>
          <dd className="text-right font-semibold tabular-nums">{formatMoney(order.order_amount, order.currency)}</dd>
        </>
      )}
    </dl>
  )

  if (outcome) {
    const { icon, tone, text } = outcomeView(outcome)
    return (
      <div className="grid gap-4" data-testid="topup-order-result" data-outcome={outcome.kind}>
        {summary}
        <div
          className={cn('flex items-start gap-2 rounded-lg border p-3 text-sm', TONES[tone])}
          role={outcome.kind === 'paid' ? 'status' : 'alert'}
          data-testid="topup-order-message"
        >
          {icon}
          <span>{text}</span>
        </div>
        <Button onClick={onClose} variant={outcome.kind === 'paid' ? 'outline' : 'default'} data-testid="topup-order-again">
          {outcome.kind === 'paid' ? t('topup:pay.again') : t('topup:pay.retry')}
        </Button>
      </div>
    )
  }

  const redirectUrl = order.pay?.type === 'redirect' ? pageUrl(order.pay.url) : undefined
  const qrLink = order.pay?.type === 'qrcode' ? contentLink(order.pay.content) : undefined
  // The app the payer scans the code with, when the gateway's type names one.
  const scanApp = order.gatewayType === 'alipay' || order.gatewayType === 'wxpay' ? order.gatewayType : 'other'
  const total = order.order_amount !== undefined && order.currency !== undefined ? formatMoney(order.order_amount, order.currency) : ''
  return (
    <div className="grid gap-4" data-testid="topup-waiting">
      <p className="flex items-center gap-2 text-sm font-medium" role="status">
        <Spinner />
        {t('topup:pay.waiting')}
      </p>
      {summary}
      {order.pay === undefined ? (
        <p className="text-sm text-muted-foreground">{t('topup:pay.returnedNote')}</p>
      ) : order.pay.type === 'redirect' ? (
        <>
          <p className="text-sm text-muted-foreground">{t('topup:pay.redirectNote')}</p>
          {redirectUrl && (
            <Button asChild variant="outline">
              <a href={redirectUrl} target="_blank" rel="noopener noreferrer" data-testid="topup-pay-link">
                <ExternalLinkIcon />
                {t('topup:pay.reopen')}
              </a>
            </Button>
          )}
        </>
      ) : (
        <>
          <p className="text-sm text-muted-foreground">{t('topup:pay.qrcodeNote')}</p>
          <QrCode
            content={order.pay.content}
            label={t(`topup:pay.qrcodeAlt.${scanApp}`, { amount: total })}
            pendingLabel={t('topup:pay.qrcodePending')}
            failedLabel={t('topup:pay.qrcodeFailed')}
            testId="topup-pay-qrcode"
          />
          {qrLink && (
            <a
              href={qrLink}
              target="_blank"
              rel="noopener noreferrer"
              className="text-sm break-all text-primary underline-offset-4 hover:underline"
              data-testid="topup-pay-link"
            >
              {t('topup:pay.qrcodeOpen')}
            </a>
          )}
          <CopyField value={order.pay.content} label={t('topup:pay.qrcodeLabel')} testId="topup-pay-content" />
        </>
      )}
      <Button variant="ghost" onClick={onClose} data-testid="topup-pay-cancel">
        {t('topup:pay.cancel')}
      </Button>
    </div>
  )
}
