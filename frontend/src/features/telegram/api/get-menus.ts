import { api } from '@/lib/api'
import { usePage } from '@/lib/list-query'
import type { TelegramMenu } from '../types'
import { telegramKeys, type TelegramMenuListParams } from './keys'

/** GET /api/option/telegram?page=&size=&keyword=: the menu's commands (keyword: command or description). */
export function useTelegramMenus(params: TelegramMenuListParams) {
  return usePage<TelegramMenu>('/api/option/telegram', telegramKeys.menuList(params), params)
}

/** GET /api/option/telegram/{id}: one entry. */
export function getTelegramMenu(id: number, signal?: AbortSignal): Promise<TelegramMenu> {
  return api.get<TelegramMenu>(`/api/option/telegram/${id}`, { signal })
}
