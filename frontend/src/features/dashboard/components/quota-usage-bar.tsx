import { useTranslation } from 'react-i18next'
import { usageLevel, usagePercent } from '@/lib/format'
import { cn } from '@/lib/utils'

const COLOURS = { green: 'bg-green-500', orange: 'bg-orange-500', red: 'bg-red-500' } as const

/** Share of the quota used (spec sections 4 and 9): green < 60 %, orange < 85 %, red above. */
export function QuotaUsageBar({ used, remaining }: { used: number; remaining: number }) {
  const { t } = useTranslation()
  const percent = usagePercent(used, remaining)
  const level = usageLevel(percent)
  const text = `${percent.toFixed(1)}%`
  return (
    <div className="grid gap-1.5">
      <div className="flex justify-between text-sm">
        <span className="text-muted-foreground">{t('dashboard:usage.share')}</span>
        <span className="font-medium tabular-nums" data-testid="usage-percent">
          {text}
        </span>
      </div>
      <div
        role="progressbar"
        aria-label={t('dashboard:usage.share')}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(percent)}
        aria-valuetext={text}
        className="h-2.5 overflow-hidden rounded-full bg-muted"
      >
        <div
          className={cn('h-full rounded-full transition-all', COLOURS[level])}
          style={{ width: `${percent}%` }}
          data-testid="usage-bar"
          data-level={level}
        />
      </div>
    </div>
  )
}
