import { zodResolver } from '@hookform/resolvers/zod'
import { CircleCheckIcon, ExternalLinkIcon, TicketIcon, WalletIcon } from 'lucide-react'
import { useMemo, useState } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Form, FormControl, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { Spinner } from '@/components/ui/spinner'
import { renderQuota } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import { useRedeemCode } from '../api/redeem-code'
import { createTopupSchema, type TopupFormValues } from '../schemas'
import type { TopupResult } from '../types'

export interface TopupPanelProps {
  /** After a successful redemption (the page refreshes the signed-in user). */
  onRedeemed?: (result: TopupResult) => void
}

/** Top-up: the current balance, redeem a code, and the operator's online top-up link. */
export function TopupPanel({ onRedeemed }: TopupPanelProps) {
  const { t } = useTranslation()
  const user = useUser()
  const { display_in_currency, quota_per_unit, top_up_link } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const schema = useMemo(() => createTopupSchema(t), [t])
  const form = useForm<TopupFormValues>({ resolver: zodResolver(schema), defaultValues: { key: '' } })
  const redeem = useRedeemCode()
  const [result, setResult] = useState<TopupResult | null>(null)

  const onSubmit = form.handleSubmit(async ({ key }) => {
    // A new attempt: the banner of the last success no longer describes what is happening.
    setResult(null)
    try {
      const r = await redeem.mutateAsync(key)
      setResult(r)
      form.reset({ key: '' })
      notify.success(t('topup:toast.redeemed', { amount: renderQuota(r.quota, display) }))
      onRedeemed?.(r)
    } catch {
      // Shown by the central error handler.
    }
  })

  const openTopUpLink = () => window.open(top_up_link, '_blank', 'noopener,noreferrer')

  const balance = result?.balance ?? user?.quota ?? 0

  return (
    <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            <WalletIcon className="size-5 text-muted-foreground" aria-hidden />
            {t('topup:balance.title')}
          </CardTitle>
          <CardDescription>{t('topup:balance.description')}</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-4">
          <div className="text-3xl font-semibold tabular-nums" data-testid="topup-balance">
            {renderQuota(balance, display)}
          </div>
          {user && (
            <dl className="grid grid-cols-2 gap-2 text-sm">
              <dt className="text-muted-foreground">{t('topup:balance.used')}</dt>
              <dd className="text-right tabular-nums">{renderQuota(user.used_quota, display)}</dd>
              <dt className="text-muted-foreground">{t('topup:balance.group')}</dt>
              <dd className="text-right" data-testid="topup-group">
                {result?.group ?? user.group}
              </dd>
            </dl>
          )}
          {top_up_link ? (
            <Button variant="outline" onClick={openTopUpLink} data-testid="topup-online">
              <ExternalLinkIcon />
              {t('topup:online.button')}
            </Button>
          ) : (
            // Nothing to pay with online: say so, and where to go instead.
            <p className="rounded-md border border-dashed p-3 text-sm text-muted-foreground" data-testid="topup-online-none">
              {t('topup:online.none')}
            </p>
          )}
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            <TicketIcon className="size-5 text-muted-foreground" aria-hidden />
            {t('topup:redeem.title')}
          </CardTitle>
          <CardDescription>{t('topup:redeem.description')}</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-4">
          <Form {...form}>
            <form onSubmit={onSubmit} noValidate className="grid gap-3" data-testid="topup-form">
              <FormField
                control={form.control}
                name="key"
                render={({ field }) => (
                  <FormItem>
                    <FormLabel>{t('topup:redeem.code')}</FormLabel>
                    <FormControl>
                      <Input
                        autoComplete="off"
                        spellCheck={false}
                        className="font-mono"
                        placeholder={t('topup:redeem.placeholder')}
                        {...field}
                      />
                    </FormControl>
                    <FormMessage />
                  </FormItem>
                )}
              />
              <Button type="submit" disabled={redeem.isPending} data-testid="topup-submit">
                {redeem.isPending && <Spinner />}
                {redeem.isPending ? t('topup:redeem.submitting') : t('topup:redeem.submit')}
              </Button>
            </form>
          </Form>
          {result && (
            <div
              className="flex items-start gap-2 rounded-lg border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-900 dark:border-emerald-900 dark:bg-emerald-950/40 dark:text-emerald-100"
              role="status"
              data-testid="topup-result"
            >
              <CircleCheckIcon className="mt-0.5 size-4 shrink-0" aria-hidden />
              <span>
                {t('topup:redeem.result', {
                  amount: renderQuota(result.quota, display),
                  balance: renderQuota(result.balance, display),
                })}
              </span>
            </div>
          )}
        </CardContent>
      </Card>
    </div>
  )
}
