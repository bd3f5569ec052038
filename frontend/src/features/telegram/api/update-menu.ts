import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { TelegramMenu, TelegramMenuPayload } from '../types'
import { telegramKeys } from './keys'

export function updateTelegramMenu(payload: TelegramMenuPayload & { id: number }): Promise<TelegramMenu> {
  return api.put<TelegramMenu>('/api/option/telegram', payload)
}

/** PUT /api/option/telegram {id, ...}: every field is sent. */
export function useUpdateTelegramMenu() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateTelegramMenu,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: telegramKeys.all }),
  })
}
