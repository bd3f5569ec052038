import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { TelegramReloadResult, TelegramStatus } from '../types'
import { telegramKeys } from './keys'

export function reloadTelegramMenu(): Promise<TelegramReloadResult> {
  return api.put<TelegramReloadResult>('/api/option/telegram/reload')
}

/**
 * PUT /api/option/telegram/reload: registers the built-in commands and the menu with Telegram
 * (setMyCommands). Afterwards the status is read again: no reload is needed any more, and a
 * failure leaves its reason in `last_error`.
 */
export function useReloadTelegramMenu() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: reloadTelegramMenu,
    onSuccess: () =>
      queryClient.setQueryData<TelegramStatus>(telegramKeys.status(), (s) => (s ? { ...s, reload_needed: false, last_error: '' } : s)),
    onSettled: () => queryClient.invalidateQueries({ queryKey: telegramKeys.status() }),
  })
}
