import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { channelKeys } from './keys'

export function updateBalance(id: number): Promise<{ balance: number }> {
  return api.get<{ balance: number }>(`/api/channel/update_balance/${id}`)
}

/** GET /api/channel/update_balance/{id}: reads and stores the upstream balance → {balance} in USD. */
export function useUpdateBalance() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: updateBalance,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: channelKeys.lists() }),
  })
}
