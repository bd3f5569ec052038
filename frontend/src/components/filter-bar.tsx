import { RotateCcwIcon, SearchIcon } from 'lucide-react'
import { useId, useState, type ComponentProps, type FormEvent, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { fromLocalInput, toLocalInput } from '@/lib/format'
import { cn } from '@/lib/utils'

export interface FilterBarProps {
  /** The form's submit (the search button); without it the controls apply as they change. */
  onSearch?: (e: FormEvent) => void
  /** A reset button beside the search button. */
  onReset?: () => void
  /**
   * The form's accessible name: a card of labelled fields. Without it, one row: a search form
   * (role search) with the actions at its right.
   */
  label?: string
  /** Classes of the form: added to a card's grid, instead of the row's own. */
  className?: string
  /** Classes of the buttons' cell of a card's grid. */
  buttonsClassName?: string
  testId?: string
  searchTestId?: string
  resetTestId?: string
  submitDisabled?: boolean
  /** More buttons after search and reset (in the form). */
  buttons?: ReactNode
  /** What follows the buttons in the form (a message about a field). */
  notice?: ReactNode
  /** The actions row: at the right of one row, under a card. */
  actions?: ReactNode
  /** The filter controls. */
  children: ReactNode
}

/** A list's search box and filter controls, its search and reset buttons, and its actions row. */
export function FilterBar({
  onSearch,
  onReset,
  label,
  className,
  buttonsClassName,
  testId,
  searchTestId,
  resetTestId,
  submitDisabled,
  buttons,
  notice,
  actions,
  children,
}: FilterBarProps) {
  const { t } = useTranslation()
  const submit = onSearch && (
    <Button type="submit" variant={label ? 'default' : 'outline'} disabled={submitDisabled} data-testid={searchTestId}>
      <SearchIcon />
      {t('common:actions.search')}
    </Button>
  )
  const reset = onReset && (
    <Button type="button" variant="outline" onClick={onReset} data-testid={resetTestId}>
      <RotateCcwIcon />
      {t('common:actions.reset')}
    </Button>
  )
  if (label) {
    return (
      <>
        <Card>
          <CardContent className="p-4">
            <form onSubmit={onSearch} aria-label={label} className={cn('grid gap-3', className)} data-testid={testId}>
              {children}
              <div className={cn('flex items-end gap-2', buttonsClassName)}>
                {submit}
                {reset}
                {buttons}
              </div>
              {notice}
            </form>
          </CardContent>
        </Card>
        {actions && <div className="flex flex-wrap items-center gap-2">{actions}</div>}
      </>
    )
  }
  const rowClass = className ?? 'flex min-w-0 flex-1 gap-2 sm:max-w-md'
  const form = onSearch ? (
    <form onSubmit={onSearch} className={rowClass} role="search" data-testid={testId}>
      {children}
      {submit}
      {reset}
      {buttons}
      {notice}
    </form>
  ) : (
    <div className={rowClass} role="search" data-testid={testId}>
      {children}
    </div>
  )
  if (!actions) return form
  return (
    <div className="flex flex-wrap items-center gap-2">
      {form}
      <div className="ml-auto flex flex-wrap gap-2">{actions}</div>
    </div>
  )
}

/** A search box named by its placeholder; with `icon`, a magnifier inside it. */
export function SearchInput({
  icon = false,
  placeholder,
  className,
  ...props
}: ComponentProps<typeof Input> & { placeholder: string; icon?: boolean }) {
  const input = <Input placeholder={placeholder} aria-label={placeholder} className={cn(icon && 'pl-8', !icon && className)} {...props} />
  if (!icon) return input
  return (
    <div className={cn('relative min-w-0', className)}>
      <SearchIcon className="pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-muted-foreground" />
      {input}
    </div>
  )
}

function Labelled({ label, className, children }: { label: string; className?: string; children: (id: string) => ReactNode }) {
  const id = useId()
  return (
    <div className={cn('grid gap-1.5', className)}>
      <Label htmlFor={id}>{label}</Label>
      {children(id)}
    </div>
  )
}

/** A labelled text filter of a filter card. */
export function FilterInput({ label, className, ...props }: ComponentProps<typeof Input> & { label: string }) {
  return <Labelled label={label} className={className}>{(id) => <Input id={id} {...props} />}</Labelled>
}

/** A labelled select filter of a filter card. */
export function FilterSelect({ label, className, ...props }: ComponentProps<typeof NativeSelect> & { label: string }) {
  return <Labelled label={label} className={className}>{(id) => <NativeSelect id={id} {...props} />}</Labelled>
}

/** A labelled date and time filter: unix seconds, 0 for none. */
export function FilterTime({
  label,
  value,
  onChange,
  ...props
}: Omit<ComponentProps<typeof Input>, 'value' | 'onChange'> & { label: string; value: number; onChange: (unix: number) => void }) {
  // The text as typed (a browser may hold a partial value); it follows the value set from outside.
  const [text, setText] = useState(() => ({ value, text: toLocalInput(value) }))
  if (text.value !== value) setText({ value, text: toLocalInput(value) })
  return (
    <Labelled label={label}>
      {(id) => (
        <Input
          id={id}
          type="datetime-local"
          value={text.text}
          onChange={(e) => {
            const unix = fromLocalInput(e.target.value)
            setText({ value: unix, text: e.target.value })
            onChange(unix)
          }}
          {...props}
        />
      )}
    </Labelled>
  )
}
