import { zodResolver } from '@hookform/resolvers/zod'
import { CircleCheckIcon, TicketIcon, WalletIcon } from 'lucide-react'
import { useMemo, useState } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { Spinner } from '@/components/ui/spinner'
import { renderQuota } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useUser } from '@/stores/session'
import { useSiteInfo } from '@/stores/site'
import { useRedeemCode } from '../api/redeem-code'
import { createTopupSchema, type TopupFormValues } from '../schemas'
import type { TopupResult } from '../types'
import { OnlineTopupCard } from './online-topup-card'

export interface TopupPanelProps {
  /** After a successful redemption (the page refreshes the signed-in user). */
  onRedeemed?: (result: TopupResult) => void
  /** After an online order is paid (the page refreshes the signed-in user). */
  onPaid?: () => void
}

/**
 * Top-up: the current balance, redeem a code, and pay online through an enabled gateway (or the
 * operator's top-up link when there is none).
 */
export function TopupPanel({ onRedeemed, onPaid }: TopupPanelProps) {
  const { t } = useTranslation()
  const user = useUser()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const schema = useMemo(() => createTopupSchema(t), [t])
  const form = useForm<TopupFormValues>({ resolver: zodResolver(schema), defaultValues: { key: '' } })
  const redeem = useRedeemCode()
  const [result, setResult] = useState<TopupResult | null>(null)
  // The balance and group a redemption answered, shown until the refreshed user arrives; a
  // payment credits the account later, so after it the signed-in user's are the ones to show.
  const [redeemed, setRedeemed] = useState<Pick<TopupResult, 'balance' | 'group'> | null>(null)

  const onSubmit = form.handleSubmit(async ({ key }) => {
    // A new attempt: the banner of the last success no longer describes what is happening.
    setResult(null)
    try {
      const r = await redeem.mutateAsync(key)
      setResult(r)
      setRedeemed({ balance: r.balance, group: r.group })
      form.reset({ key: '' })
      notify.success(t('topup:toast.redeemed', { amount: renderQuota(r.quota, display) }))
      onRedeemed?.(r)
    } catch {
      // Shown by the central error handler.
    }
  })

  const balance = redeemed?.balance ?? user?.quota ?? 0

  return (
    <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-2">
      <div className="grid grid-cols-1 gap-4">
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
                  {redeemed?.group ?? user.group}
                </dd>
              </dl>
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
                <TextField control={form.control} name="key" label={t('topup:redeem.code')} autoComplete="off" spellCheck={false} inputClassName="font-mono" placeholder={t('topup:redeem.placeholder')} />
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

      <OnlineTopupCard
        onPaid={() => {
          setRedeemed(null)
          onPaid?.()
        }}
      />
    </div>
  )
}
