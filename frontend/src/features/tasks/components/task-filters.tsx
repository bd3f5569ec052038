import { RotateCcwIcon, SearchIcon } from 'lucide-react'
import { useId, type FormEvent, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import type { TaskFilters } from '../api/keys'
import { TASK_STATUSES } from '../types'

/** Form state: times as datetime-local text. */
export interface TaskFilterDraft {
  task_id: string
  action: string
  status: string
  user_id: string
  channel_id: string
  start: string
  end: string
}

export const EMPTY_TASK_DRAFT: TaskFilterDraft = { task_id: '', action: '', status: '', user_id: '', channel_id: '', start: '', end: '' }

const toUnix = (v: string) => (v ? Math.floor(new Date(v).getTime() / 1000) || 0 : 0)

export function toTaskFilters(d: TaskFilterDraft): TaskFilters {
  return {
    task_id: d.task_id.trim(),
    action: d.action,
    status: d.status,
    user_id: d.user_id.trim(),
    channel_id: d.channel_id.trim(),
    start_timestamp: toUnix(d.start),
    end_timestamp: toUnix(d.end),
  }
}

export interface TaskFilterFormProps {
  admin: boolean
  draft: TaskFilterDraft
  onChange: (draft: TaskFilterDraft) => void
  onSearch: () => void
  onReset: () => void
  /** Actions offered in the action filter (values as the server takes them). */
  actions: readonly { value: string; label: string }[]
  /** More fields before the others (the platform on the async tasks screen). */
  extra?: ReactNode
}

/** Filters shared by the Midjourney and async task lists. */
export function TaskFilterForm({ admin, draft, onChange, onSearch, onReset, actions, extra }: TaskFilterFormProps) {
  const { t } = useTranslation()
  const id = useId()
  const set = (key: keyof TaskFilterDraft) => (e: { target: { value: string } }) => onChange({ ...draft, [key]: e.target.value })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    onSearch()
  }
  const field = (key: keyof TaskFilterDraft, label: string, type = 'text') => (
    <div className="grid gap-1.5">
      <Label htmlFor={`${id}-${key}`}>{label}</Label>
      <Input
        id={`${id}-${key}`}
        type={type}
        inputMode={key === 'user_id' || key === 'channel_id' ? 'numeric' : undefined}
        value={draft[key]}
        onChange={set(key)}
        data-testid={`task-filter-${key}`}
      />
    </div>
  )
  return (
    <Card>
      <CardContent className="p-4">
        <form onSubmit={submit} aria-label={t('tasks:filters.label')} className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4" data-testid="task-filters">
          {extra}
          {field('task_id', t('tasks:filters.taskId'))}
          <div className="grid gap-1.5">
            <Label htmlFor={`${id}-action`}>{t('tasks:filters.action')}</Label>
            <NativeSelect id={`${id}-action`} value={draft.action} onChange={set('action')} data-testid="task-filter-action">
              <option value="">{t('tasks:filters.any')}</option>
              {actions.map((a) => (
                <option key={a.value} value={a.value}>
                  {a.label}
                </option>
              ))}
            </NativeSelect>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={`${id}-status`}>{t('tasks:filters.status')}</Label>
            <NativeSelect id={`${id}-status`} value={draft.status} onChange={set('status')} data-testid="task-filter-status">
              <option value="">{t('tasks:filters.any')}</option>
              {TASK_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {t(`tasks:status.${s}`)}
                </option>
              ))}
            </NativeSelect>
          </div>
          {admin && field('user_id', t('tasks:filters.userId'))}
          {admin && field('channel_id', t('tasks:filters.channelId'))}
          {field('start', t('tasks:filters.start'), 'datetime-local')}
          {field('end', t('tasks:filters.end'), 'datetime-local')}
          <div className="flex items-end gap-2">
            <Button type="submit" data-testid="task-search">
              <SearchIcon />
              {t('common:actions.search')}
            </Button>
            <Button type="button" variant="outline" onClick={onReset}>
              <RotateCcwIcon />
              {t('common:actions.reset')}
            </Button>
          </div>
        </form>
      </CardContent>
    </Card>
  )
}
