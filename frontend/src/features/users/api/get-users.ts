import { usePage } from '@/lib/list-query'
import type { ManagedUser } from '../types'
import { userKeys, type UserListParams } from './keys'

/** GET /api/user: keyword (username, display name, e-mail, id), group, role, status, order, paging. */
export function useUsers(params: UserListParams) {
  return usePage<ManagedUser>('/api/user', userKeys.list(params), params)
}
