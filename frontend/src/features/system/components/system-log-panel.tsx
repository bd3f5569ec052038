import { EraserIcon } from 'lucide-react'
import { useEffect, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Spinner } from '@/components/ui/spinner'
import { cn } from '@/lib/utils'
import { useSystemLog } from '../api/queries'
import type { LogLine } from '../types'

/** Lines kept on screen. */
export const MAX_LINES = 1000

const LEVEL_CLASS: Record<string, string> = {
  ERROR: 'text-red-500',
  WARN: 'text-amber-500',
  DEBUG: 'text-muted-foreground',
  TRACE: 'text-muted-foreground',
}

/** The node's recent log lines (root), appended on every poll, newest at the bottom. */
export function SystemLogPanel({ intervalMs }: { intervalMs: number }) {
  const { t } = useTranslation()
  const log = useSystemLog(intervalMs)
  const [lines, setLines] = useState<LogLine[]>([])
  const [truncated, setTruncated] = useState(false)
  const box = useRef<HTMLDivElement>(null)
  const atBottom = useRef(true)

  useEffect(() => {
    const page = log.data
    if (!page) return
    if (page.truncated) setTruncated(true)
    if (page.lines.length === 0) return
    setLines((prev) => {
      const last = prev.at(-1)?.seq ?? -1
      return [...prev, ...page.lines.filter((l) => l.seq > last)].slice(-MAX_LINES)
    })
  }, [log.data])

  useEffect(() => {
    const el = box.current
    if (el && atBottom.current) el.scrollTop = el.scrollHeight
  }, [lines])

  return (
    <Card>
      <CardHeader className="flex-row flex-wrap items-center justify-between gap-2 space-y-0">
        <CardTitle>
          <h2>{t('system:log.title')}</h2>
        </CardTitle>
        <Button variant="outline" size="sm" onClick={() => setLines([])} data-testid="system-log-clear">
          <EraserIcon />
          {t('system:log.clear')}
        </Button>
      </CardHeader>
      <CardContent className="grid grid-cols-1 gap-2">
        {truncated && (
          <p className="text-xs text-amber-600" data-testid="system-log-truncated">
            {t('system:log.truncated')}
          </p>
        )}
        <div
          ref={box}
          onScroll={(e) => {
            const el = e.currentTarget
            atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24
          }}
          className="h-96 overflow-auto rounded-md border bg-zinc-950 p-3 font-mono text-xs leading-5 text-zinc-100"
          role="log"
          aria-label={t('system:log.title')}
          data-testid="system-log"
        >
          {log.isPending ? (
            <div className="flex justify-center p-10" role="status" aria-label={t('common:state.loading')}>
              <Spinner className="size-6" />
            </div>
          ) : lines.length === 0 ? (
            <p className="text-zinc-400" data-testid="system-log-empty">
              {t('system:log.empty')}
            </p>
          ) : (
            lines.map((l) => (
              <div key={l.seq} className="whitespace-pre-wrap break-all" data-testid="system-log-line">
                <span className="text-zinc-500">{l.time.replace('T', ' ').replace(/\.\d+Z$/, 'Z')} </span>
                <span className={cn('font-semibold', LEVEL_CLASS[l.level] ?? 'text-sky-400')}>{l.level.padEnd(5)} </span>
                {l.text}
              </div>
            ))
          )}
        </div>
      </CardContent>
    </Card>
  )
}
