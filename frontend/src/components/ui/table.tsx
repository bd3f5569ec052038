import { useLayoutEffect, useRef, type ComponentProps } from 'react'
import { cn } from '@/lib/utils'

/** Gives every body cell its column's heading as `data-label` (what a phone card shows). */
function labelCells(table: HTMLTableElement) {
  const heads = Array.from(table.tHead?.rows[0]?.cells ?? []).map((th) => th.textContent?.trim() ?? '')
  for (const body of Array.from(table.tBodies)) {
    for (const row of Array.from(body.rows)) {
      let col = 0
      for (const cell of Array.from(row.cells)) {
        const head = heads[col]
        if (head && cell.getAttribute('data-label') !== head) cell.setAttribute('data-label', head)
        col += cell.colSpan
      }
    }
  }
}

/**
 * A table. With `cards`, it reads as a list of cards on a phone (index.css: each cell a
 * "heading: value" line; cells may take `data-card` = title | actions | hide) and its
 * `data-card="actions"` column stays in view at the right edge on wider screens.
 */
export function Table({ className, cards = false, ...props }: ComponentProps<'table'> & { cards?: boolean }) {
  const ref = useRef<HTMLTableElement>(null)
  useLayoutEffect(() => {
    const table = ref.current
    if (!cards || !table) return
    labelCells(table)
    // Rows come and go with paging and filters, headings with the language.
    const observer = new MutationObserver(() => labelCells(table))
    observer.observe(table, { childList: true, subtree: true, characterData: true })
    return () => observer.disconnect()
  }, [cards])
  return (
    <div data-slot="table-container" className="relative w-full overflow-x-auto">
      <table
        ref={ref}
        data-slot="table"
        data-cards={cards ? '' : undefined}
        className={cn('w-full caption-bottom text-sm', className)}
        {...props}
      />
    </div>
  )
}

export function TableHeader({ className, ...props }: ComponentProps<'thead'>) {
  return <thead className={cn('[&_tr]:border-b', className)} {...props} />
}

export function TableBody({ className, ...props }: ComponentProps<'tbody'>) {
  return <tbody className={cn('[&_tr:last-child]:border-0', className)} {...props} />
}

export function TableRow({ className, ...props }: ComponentProps<'tr'>) {
  return <tr className={cn('border-b transition-colors hover:bg-muted/50', className)} {...props} />
}

export function TableHead({ className, ...props }: ComponentProps<'th'>) {
  return (
    <th
      className={cn('h-10 px-3 text-left align-middle font-medium whitespace-nowrap text-muted-foreground', className)}
      {...props}
    />
  )
}

export function TableCell({ className, ...props }: ComponentProps<'td'>) {
  return <td className={cn('px-3 py-2 align-middle', className)} {...props} />
}
