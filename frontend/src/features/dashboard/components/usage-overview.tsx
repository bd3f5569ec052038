import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { ColumnChart, RankChart } from '@/components/bar-chart'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { formatDay, renderQuota } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import type { User } from '@/types/api'
import { useDashboard } from '../api/get-dashboard'
import { cacheHitRate, formatCacheHitRate } from '../cache-hit-rate'
import { QuotaUsageBar } from './quota-usage-bar'

export const DAY_CHOICES = [7, 14, 30, 90] as const

/** Overview: the share of the quota used, then the period's usage per day and per model. */
export function UsageOverview({ user }: { user: User }) {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const [days, setDays] = useState<number>(7)
  const dashboard = useDashboard(days)
  const data = dashboard.data

  const hasUsage = (data?.by_model.length ?? 0) > 0
  const hitRate = data ? cacheHitRate(data.totals) : null

  return (
    <div className="grid grid-cols-1 gap-4">
      <Card className="p-4">
        <QuotaUsageBar used={user.used_quota} remaining={user.quota} />
      </Card>

      <Card>
        <CardHeader className="flex-row flex-wrap items-center justify-between gap-2 space-y-0">
          <div className="grid grid-cols-1 gap-1">
            <CardTitle>
              <h2>{t('dashboard:usage.title')}</h2>
            </CardTitle>
            <CardDescription>{t('dashboard:usage.description')}</CardDescription>
            {data && (
              <p className="text-sm">
                <span className="text-muted-foreground">{t('dashboard:stats.periodQuota', { days })}: </span>
                <span className="font-semibold tabular-nums" data-testid="stat-period-quota">
                  {renderQuota(data.totals.quota, display)}
                </span>
                <span className="text-muted-foreground"> · {t('dashboard:usage.requestsN', { count: data.totals.request_count })}</span>
              </p>
            )}
            {data && (
              <p className="text-sm" data-testid="stat-cache-hit">
                <span className="text-muted-foreground">{t('dashboard:stats.cacheHitRate')}: </span>
                <span className="font-semibold tabular-nums" data-testid="stat-cache-hit-rate">
                  {formatCacheHitRate(hitRate)}
                </span>
                <span className="text-muted-foreground" data-testid="stat-cache-hit-hint">
                  {' · '}
                  {hitRate === null
                    ? t('dashboard:stats.cacheHitNoRequests')
                    : t('dashboard:stats.cacheHitHint', {
                        hits: (data.totals.cache_hits ?? 0).toLocaleString(),
                        total: data.totals.request_count.toLocaleString(),
                      })}
                </span>
              </p>
            )}
          </div>
          <NativeSelect
            className="w-auto"
            value={days}
            onChange={(e) => setDays(Number(e.target.value))}
            aria-label={t('dashboard:usage.period')}
            data-testid="dashboard-days"
          >
            {DAY_CHOICES.map((d) => (
              <option key={d} value={d}>
                {t('dashboard:usage.lastDays', { days: d })}
              </option>
            ))}
          </NativeSelect>
        </CardHeader>
        <CardContent>
          {dashboard.isPending ? (
            <div className="flex justify-center p-10" role="status" aria-label={t('common:state.loading')}>
              <Spinner className="size-6" />
            </div>
          ) : !data || !hasUsage ? (
            <p className="p-10 text-center text-sm text-muted-foreground" data-testid="dashboard-empty">
              {dashboard.isError ? t('dashboard:usage.loadFailed') : t('dashboard:usage.empty')}
            </p>
          ) : (
            <div className="grid gap-6 lg:grid-cols-[2fr_1fr]">
              <section className="grid grid-cols-1 gap-2">
                <h3 className="text-sm font-medium">{t('dashboard:usage.byDay')}</h3>
                <ColumnChart
                  label={t('dashboard:usage.byDay')}
                  testId="usage-by-day"
                  data={data.by_day.map((d) => ({
                    key: String(d.day),
                    label: formatDay(d.day),
                    value: d.quota,
                    display: `${renderQuota(d.quota, display)} · ${t('dashboard:usage.requestsN', { count: d.request_count })}`,
                  }))}
                />
              </section>
              <section className="grid content-start gap-2">
                <h3 className="text-sm font-medium">{t('dashboard:usage.byModel')}</h3>
                <RankChart
                  label={t('dashboard:usage.byModel')}
                  testId="usage-by-model"
                  data={[...data.by_model]
                    .sort((a, b) => b.quota - a.quota)
                    .map((m) => ({
                      key: m.model_name,
                      label: m.model_name,
                      value: m.quota,
                      display: `${renderQuota(m.quota, display)} · ${t('dashboard:usage.requestsN', { count: m.request_count })}`,
                    }))}
                />
              </section>
            </div>
          )}
        </CardContent>
      </Card>
    </div>
  )
}
