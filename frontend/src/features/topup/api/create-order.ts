import { useMutation } from '@tanstack/react-query'
import { api } from '@/lib/api'
import type { CreatedOrder } from '../types'

export function createOrder(body: { uuid: string; amount: number }): Promise<CreatedOrder> {
  return api.post<CreatedOrder>('/api/user/order', body)
}

/** POST /api/user/order {uuid, amount} → the order and how to pay it. */
export function useCreateOrder() {
  return useMutation({ mutationFn: createOrder })
}
