import type { ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { FilterBar, FilterInput, FilterSelect } from '@/components/filter-bar'
import type { ListScreen } from '@/hooks/use-list-screen'
import type { ChannelFilters } from '../api/keys'
import { CHANNEL_STATUS, CHANNEL_TYPES, type Channel } from '../types'

const ORDERS = ['-id', 'id', '-priority', '-weight', 'response_time', '-balance', '-used_quota', 'name'] as const
type OrderKey = 'idDesc' | 'idAsc' | 'priorityDesc' | 'weightDesc' | 'responseAsc' | 'balanceDesc' | 'usedDesc' | 'nameAsc'
const ORDER_KEYS: Record<(typeof ORDERS)[number], OrderKey> = {
  '-id': 'idDesc',
  id: 'idAsc',
  '-priority': 'priorityDesc',
  '-weight': 'weightDesc',
  response_time: 'responseAsc',
  '-balance': 'balanceDesc',
  '-used_quota': 'usedDesc',
  name: 'nameAsc',
}

export const CHANNEL_FILTERS: ChannelFilters = { keyword: '', type: 0, status: 0, group: '', tag: '', model: '', order: '-id' }

/** The channels' filter card (keyword, type, status, order, group, tag, model) and the actions under it. */
export function ChannelFilterBar({
  list,
  onSearch,
  actions,
}: {
  list: ListScreen<Channel, ChannelFilters>
  onSearch: () => void
  actions: ReactNode
}) {
  const { t } = useTranslation()
  const text = (key: 'keyword' | 'group' | 'tag' | 'model', label: string, placeholder?: string) => (
    <FilterInput
      label={label}
      className={key === 'keyword' ? 'col-span-2 lg:col-span-1' : undefined}
      {...list.bind(key)}
      placeholder={placeholder}
      data-testid={`channel-filter-${key}`}
    />
  )
  return (
    <FilterBar
      label={t('channels:filters.label')}
      onSearch={(e) => {
        list.search(e)
        onSearch()
      }}
      onReset={() => {
        list.reset()
        onSearch()
      }}
      className="grid-cols-2 lg:grid-cols-4"
      buttonsClassName="max-lg:col-span-2"
      testId="channel-filters"
      searchTestId="channel-search"
      actions={actions}
    >
      {text('keyword', t('channels:filters.keyword'), t('channels:filters.keywordPlaceholder'))}
      <FilterSelect label={t('channels:filters.type')} {...list.bind('type')} data-testid="channel-filter-type">
        <option value={0}>{t('channels:filters.any')}</option>
        {CHANNEL_TYPES.map((x) => (
          <option key={x.id} value={x.id}>
            {x.name}
          </option>
        ))}
      </FilterSelect>
      <FilterSelect label={t('channels:filters.status')} {...list.bind('status')} data-testid="channel-filter-status">
        <option value={0}>{t('channels:filters.any')}</option>
        <option value={CHANNEL_STATUS.enabled}>{t('channels:status.enabled')}</option>
        <option value={CHANNEL_STATUS.disabled}>{t('channels:status.disabled')}</option>
        <option value={CHANNEL_STATUS.autoDisabled}>{t('channels:status.autoDisabled')}</option>
      </FilterSelect>
      <FilterSelect label={t('channels:filters.order')} {...list.bind('order')} data-testid="channel-filter-order">
        {ORDERS.map((o) => (
          <option key={o} value={o}>
            {t(`channels:order.${ORDER_KEYS[o]}`)}
          </option>
        ))}
      </FilterSelect>
      {text('group', t('channels:filters.group'))}
      {text('tag', t('channels:filters.tag'))}
      {text('model', t('channels:filters.model'))}
    </FilterBar>
  )
}
