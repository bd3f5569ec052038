import { zodResolver } from '@hookform/resolvers/zod'
import { DownloadIcon } from 'lucide-react'
import { useMemo, useState } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { ColumnChart, RankChart } from '@/components/bar-chart'
import { DataPagination } from '@/components/data-pagination'
import { ListState } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { formatDay, renderNumber, renderQuota } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import { exportCsvUrl, usePeriod, useStatistics, useUserUsage } from '../api/queries'
import { createPeriodSchema, fromDateInput, lastDays, type PeriodFormValues } from '../period'
import type { PeriodParams } from '../types'

const PRESETS = [7, 30, 90] as const

/** Site-wide analytics (admin): period totals, per day, per model, per user, CSV export. */
export function AnalyticsPanel() {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const schema = useMemo(() => createPeriodSchema(t), [t])
  const initial = useMemo(() => lastDays(7), [])
  const form = useForm<PeriodFormValues, unknown, PeriodParams>({ resolver: zodResolver(schema), defaultValues: initial })
  const [period, setPeriod] = useState<PeriodParams>({
    start_timestamp: fromDateInput(initial.start),
    end_timestamp: fromDateInput(initial.end),
  })
  const [paging, setPaging] = useState({ page: 1, size: 10 })

  const stats = useStatistics(period)
  const series = usePeriod(period)
  const users = useUserUsage({ ...period, ...paging })

  const apply = form.handleSubmit((p) => {
    setPeriod(p)
    setPaging((x) => ({ ...x, page: 1 }))
  })
  const preset = (days: number) => {
    const range = lastDays(days)
    form.reset(range)
    setPeriod({ start_timestamp: fromDateInput(range.start), end_timestamp: fromDateInput(range.end) })
    setPaging((x) => ({ ...x, page: 1 }))
  }

  const s = stats.data
  const cards = [
    { id: 'quota', label: t('analytics:stats.quota'), value: s ? renderQuota(s.quota, display) : '-' },
    { id: 'requests', label: t('analytics:stats.requests'), value: s ? renderNumber(s.request_count) : '-' },
    { id: 'tokens', label: t('analytics:stats.tokens'), value: s ? renderNumber(s.prompt_tokens + s.completion_tokens) : '-' },
    { id: 'active-users', label: t('analytics:stats.activeUsers'), value: s ? `${s.users} / ${s.total_users}` : '-' },
    { id: 'channels', label: t('analytics:stats.channels'), value: s ? `${s.enabled_channels} / ${s.total_channels}` : '-' },
    { id: 'active-channels', label: t('analytics:stats.activeChannels'), value: s ? String(s.channels) : '-' },
  ]
  const rows = users.data?.data ?? []
  const hasUsage = (series.data?.by_model.length ?? 0) > 0

  return (
    <div className="grid grid-cols-1 gap-4">
      <Card className="p-4">
        <Form {...form}>
          <form onSubmit={apply} noValidate className="flex flex-wrap items-start gap-3" data-testid="analytics-period">
            <TextField control={form.control} name="start" label={t('analytics:period.start')} type="date" inputClassName="w-40" />
            <TextField control={form.control} name="end" label={t('analytics:period.end')} type="date" inputClassName="w-40" />
            <div className="flex flex-wrap gap-2 sm:pt-[1.375rem]">
              <Button type="submit" data-testid="analytics-apply">
                {t('analytics:period.apply')}
              </Button>
              {PRESETS.map((d) => (
                <Button key={d} type="button" variant="outline" onClick={() => preset(d)}>
                  {t('analytics:period.lastDays', { days: d })}
                </Button>
              ))}
              <Button asChild variant="outline">
                <a href={exportCsvUrl(period)} download data-testid="analytics-export">
                  <DownloadIcon />
                  {t('analytics:export')}
                </a>
              </Button>
            </div>
          </form>
        </Form>
      </Card>

      <div className="grid grid-cols-2 gap-3 lg:grid-cols-3 xl:grid-cols-6">
        {cards.map((c) => (
          <Card key={c.id} className="p-4">
            <div className="text-xs text-muted-foreground">{c.label}</div>
            <div className="mt-1 truncate text-xl font-semibold tabular-nums" data-testid={`analytics-${c.id}`}>
              {c.value}
            </div>
          </Card>
        ))}
      </div>

      <div className="grid gap-4 lg:grid-cols-[2fr_1fr]">
        <Card>
          <CardHeader>
            <CardTitle>
              <h2>{t('analytics:byDay')}</h2>
            </CardTitle>
          </CardHeader>
          <CardContent>
            <ListState loading={series.isPending} query={series} empty={!hasUsage} emptyText={t('analytics:empty')} emptyTestId="analytics-empty">
              <ColumnChart
                label={t('analytics:byDay')}
                testId="analytics-by-day"
                data={(series.data?.by_day ?? []).map((d) => ({
                  key: String(d.day),
                  label: formatDay(d.day),
                  value: d.quota,
                  display: `${renderQuota(d.quota, display)} · ${t('analytics:requestsN', { count: d.request_count })}`,
                }))}
              />
            </ListState>
          </CardContent>
        </Card>
        <Card>
          <CardHeader>
            <CardTitle>
              <h2>{t('analytics:byModel')}</h2>
            </CardTitle>
          </CardHeader>
          <CardContent>
            <ListState loading={series.isPending} query={series} empty={!hasUsage} emptyText={t('analytics:empty')} emptyTestId="analytics-models-empty">
              <RankChart
                label={t('analytics:byModel')}
                testId="analytics-by-model"
                data={(series.data?.by_model ?? []).slice(0, 15).map((m) => ({
                  key: m.model_name,
                  label: m.model_name,
                  value: m.quota,
                  display: renderQuota(m.quota, display),
                }))}
              />
            </ListState>
          </CardContent>
        </Card>
      </div>

      <Card>
        <CardHeader>
          <CardTitle>
            <h2>{t('analytics:users.title')}</h2>
          </CardTitle>
        </CardHeader>
        <CardContent className="p-0">
          <ListState loading={users.isPending} query={users} empty={rows.length === 0} emptyText={t('analytics:empty')} emptyTestId="analytics-users-empty">
            <Table cards data-testid="analytics-users">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('analytics:users.user')}</TableHead>
                  <TableHead>{t('analytics:users.quota')}</TableHead>
                  <TableHead>{t('analytics:users.requests')}</TableHead>
                  <TableHead>{t('analytics:users.tokens')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((u) => (
                  <TableRow key={u.user_id} data-testid={`analytics-user-${u.user_id}`}>
                    <TableCell data-card="title">
                      <span className="font-medium">{u.username}</span>
                      <span className="ml-1 text-xs text-muted-foreground">#{u.user_id}</span>
                    </TableCell>
                    <TableCell>{renderQuota(u.quota, display)}</TableCell>
                    <TableCell>{renderNumber(u.request_count)}</TableCell>
                    <TableCell>{renderNumber(u.tokens)}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>
      {(users.data?.total_count ?? 0) > 0 && (
        <DataPagination
          page={paging.page}
          size={paging.size}
          total={users.data?.total_count ?? 0}
          onPageChange={(page) => setPaging((p) => ({ ...p, page }))}
          onSizeChange={(size) => setPaging({ size, page: 1 })}
        />
      )}
    </div>
  )
}
