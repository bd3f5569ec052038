import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { TelegramMenu, TelegramMenuPayload } from '../types'
import { telegramKeys } from './keys'

export function createTelegramMenu(payload: TelegramMenuPayload): Promise<TelegramMenu> {
  return api.post<TelegramMenu>('/api/option/telegram', payload)
}

/** POST /api/option/telegram: the menu (and the status's `reload_needed`) change. */
export function useCreateTelegramMenu() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: createTelegramMenu,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: telegramKeys.all }),
  })
}
