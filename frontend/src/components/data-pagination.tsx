import { ChevronLeftIcon, ChevronRightIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { NativeSelect } from '@/components/ui/native-select'

export const PAGE_SIZES = [10, 20, 50, 100] as const

export interface DataPaginationProps {
  page: number
  size: number
  total: number
  onPageChange: (page: number) => void
  onSizeChange: (size: number) => void
}

/** Total, page size and previous/next for a `{page, size, total_count}` list. */
export function DataPagination({ page, size, total, onPageChange, onSizeChange }: DataPaginationProps) {
  const { t } = useTranslation()
  const pages = Math.max(1, Math.ceil(total / size))
  return (
    <nav
      aria-label={t('common:pagination.label')}
      className="flex flex-wrap items-center justify-end gap-3 text-sm text-muted-foreground"
      data-testid="pagination"
    >
      <span data-testid="pagination-total">{t('common:pagination.total', { total })}</span>
      <label className="flex items-center gap-2">
        <span>{t('common:pagination.pageSize')}</span>
        <NativeSelect
          className="h-8 w-20"
          value={size}
          onChange={(e) => onSizeChange(Number(e.target.value))}
          data-testid="pagination-size"
        >
          {PAGE_SIZES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </NativeSelect>
      </label>
      <span data-testid="pagination-page">{t('common:pagination.page', { page, pages })}</span>
      <div className="flex gap-1">
        <Button
          variant="outline"
          size="icon"
          className="size-8"
          disabled={page <= 1}
          onClick={() => onPageChange(page - 1)}
          aria-label={t('common:pagination.previous')}
        >
          <ChevronLeftIcon />
        </Button>
        <Button
          variant="outline"
          size="icon"
          className="size-8"
          disabled={page >= pages}
          onClick={() => onPageChange(page + 1)}
          aria-label={t('common:pagination.next')}
        >
          <ChevronRightIcon />
        </Button>
      </div>
    </nav>
  )
}
