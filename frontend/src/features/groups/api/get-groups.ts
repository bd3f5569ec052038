import { usePage } from '@/lib/list-query'
import type { UserGroup } from '../types'
import { groupKeys, type GroupListParams } from './keys'

/** GET /api/user_group: paged; keyword (symbol, name or id). */
export function useGroups(params: GroupListParams) {
  return usePage<UserGroup>('/api/user_group', groupKeys.list(params), params)
}
