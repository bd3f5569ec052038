import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { telegramKeys } from './keys'

export function deleteTelegramMenu(id: number): Promise<unknown> {
  return api.delete(`/api/option/telegram/${id}`)
}

/** DELETE /api/option/telegram/{id}. */
export function useDeleteTelegramMenu() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: deleteTelegramMenu,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: telegramKeys.all }),
  })
}
