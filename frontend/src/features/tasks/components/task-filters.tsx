import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { FilterBar, FilterInput, FilterSelect, FilterTime } from '@/components/filter-bar'
import { TASK_STATUSES } from '../types'
import type { TaskList } from './use-task-list'

export interface TaskFilterFormProps {
  admin: boolean
  list: TaskList['list']
  /** Actions offered in the action filter (values as the server takes them). */
  actions: readonly { value: string; label: string }[]
  /** More fields before the others (the platform on the async tasks screen). */
  extra?: ReactNode
}

/** Filters shared by the Midjourney and async task lists. */
export function TaskFilterForm({ admin, list, actions, extra }: TaskFilterFormProps) {
  const { t } = useTranslation()
  const field = (key: 'task_id' | 'user_id' | 'channel_id', label: string) => (
    <FilterInput
      label={label}
      inputMode={key === 'task_id' ? undefined : 'numeric'}
      {...list.bind(key)}
      data-testid={`task-filter-${key}`}
    />
  )
  const time = (key: 'start' | 'end', label: string) => (
    <FilterTime label={label} value={list.draft[key]} onChange={(v) => list.setDraft({ [key]: v })} data-testid={`task-filter-${key}`} />
  )
  return (
    <FilterBar
      label={t('tasks:filters.label')}
      onSearch={list.search}
      onReset={list.reset}
      className="sm:grid-cols-2 lg:grid-cols-4"
      testId="task-filters"
      searchTestId="task-search"
    >
      {extra}
      {field('task_id', t('tasks:filters.taskId'))}
      <FilterSelect label={t('tasks:filters.action')} {...list.bind('action')} data-testid="task-filter-action">
        <option value="">{t('tasks:filters.any')}</option>
        {actions.map((a) => (
          <option key={a.value} value={a.value}>
            {a.label}
          </option>
        ))}
      </FilterSelect>
      <FilterSelect label={t('tasks:filters.status')} {...list.bind('status')} data-testid="task-filter-status">
        <option value="">{t('tasks:filters.any')}</option>
        {TASK_STATUSES.map((s) => (
          <option key={s} value={s}>
            {t(`tasks:status.${s}`)}
          </option>
        ))}
      </FilterSelect>
      {admin && field('user_id', t('tasks:filters.userId'))}
      {admin && field('channel_id', t('tasks:filters.channelId'))}
      {time('start', t('tasks:filters.start'))}
      {time('end', t('tasks:filters.end'))}
    </FilterBar>
  )
}
