import { cn } from '@/lib/utils'

export interface BarDatum {
  /** Stable key of the bar (a day, a model name). */
  key: string
  label: string
  value: number
  /** What a tooltip and screen readers show for the value (formatted quota, a count). */
  display: string
}

/**
 * A vertical bar chart in plain CSS (no chart library): one column per datum, heights relative
 * to the largest value, the formatted value in the title. Scrolls sideways on narrow screens.
 */
export function ColumnChart({ data, label, testId }: { data: BarDatum[]; label: string; testId: string }) {
  const max = Math.max(0, ...data.map((d) => d.value))
  return (
    <figure className="grid gap-2" data-testid={testId}>
      <figcaption className="sr-only">{label}</figcaption>
      <div className="overflow-x-auto">
        <ul className="flex h-44 min-w-full items-end gap-1 border-b pb-px" style={{ minWidth: `${data.length * 1.75}rem` }}>
          {data.map((d) => {
            const pct = max > 0 ? Math.max(d.value > 0 ? 2 : 0, (d.value / max) * 100) : 0
            return (
              <li
                key={d.key}
                className="group flex h-full flex-1 flex-col justify-end"
                title={`${d.label}: ${d.display}`}
                data-testid={`${testId}-bar`}
              >
                <span className="sr-only">{`${d.label}: ${d.display}`}</span>
                <div
                  className="w-full rounded-t-sm bg-primary/80 transition-colors group-hover:bg-primary"
                  style={{ height: `${pct}%` }}
                />
              </li>
            )
          })}
        </ul>
        <div className="flex gap-1 pt-1" style={{ minWidth: `${data.length * 1.75}rem` }} aria-hidden>
          {data.map((d, i) => (
            <span
              key={d.key}
              className={cn(
                'flex-1 truncate text-center text-[10px] text-muted-foreground',
                data.length > 14 && i % Math.ceil(data.length / 10) !== 0 && 'invisible',
              )}
            >
              {d.label}
            </span>
          ))}
        </div>
      </div>
    </figure>
  )
}

/** Horizontal bars with their labels and values (a ranking: models, users). */
export function RankChart({ data, label, testId }: { data: BarDatum[]; label: string; testId: string }) {
  const max = Math.max(0, ...data.map((d) => d.value))
  return (
    <ul className="grid gap-2" aria-label={label} data-testid={testId}>
      {data.map((d) => (
        <li key={d.key} className="grid gap-1" data-testid={`${testId}-row`}>
          <div className="flex items-baseline justify-between gap-2 text-sm">
            <span className="min-w-0 truncate font-medium" title={d.label}>
              {d.label}
            </span>
            <span className="shrink-0 tabular-nums text-muted-foreground">{d.display}</span>
          </div>
          <div className="h-2 rounded-full bg-muted">
            <div
              className="h-2 rounded-full bg-primary/80"
              style={{ width: `${max > 0 ? Math.max(d.value > 0 ? 1 : 0, (d.value / max) * 100) : 0}%` }}
            />
          </div>
        </li>
      ))}
    </ul>
  )
}
