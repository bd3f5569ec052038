import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { Page } from '@/types/api'
import type { TelegramMenu } from '../types'
import { telegramKeys, type TelegramMenuListParams } from './keys'

export function getTelegramMenus(params: TelegramMenuListParams, signal?: AbortSignal): Promise<Page<TelegramMenu>> {
  return api.get<Page<TelegramMenu>>('/api/option/telegram', {
    query: { page: params.page, size: params.size, keyword: params.keyword || undefined },
    signal,
  })
}

export function getTelegramMenusQueryOptions(params: TelegramMenuListParams) {
  return queryOptions({
    queryKey: telegramKeys.menuList(params),
    queryFn: ({ signal }) => getTelegramMenus(params, signal),
    placeholderData: keepPreviousData,
  })
}

/** GET /api/option/telegram?page=&size=&keyword=: the menu's commands (keyword: command or description). */
export function useTelegramMenus(params: TelegramMenuListParams) {
  return useQuery(getTelegramMenusQueryOptions(params))
}

/** GET /api/option/telegram/{id}: one entry. */
export function getTelegramMenu(id: number, signal?: AbortSignal): Promise<TelegramMenu> {
  return api.get<TelegramMenu>(`/api/option/telegram/${id}`, { signal })
}
