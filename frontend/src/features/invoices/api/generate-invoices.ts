import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '@/lib/api'
import { invoiceKeys } from './keys'

export function generateInvoices(body: { month: string; regenerate: boolean }): Promise<{ generated: number }> {
  return api.post<{ generated: number }>('/api/invoice/generate', body)
}

/** POST /api/invoice/generate {month, regenerate} (root): bill an ended month now. */
export function useGenerateInvoices() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: generateInvoices,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: invoiceKeys.all }),
  })
}
