import { api } from '@/lib/api'
import { setUserGroups } from '@/stores/session'
import type { UserGroupMap } from '@/types/api'

export function getUserGroups(signal?: AbortSignal): Promise<UserGroupMap> {
  return api.get<UserGroupMap>('/api/user_group_map', { signal })
}

/**
 * GET /api/user_group_map after a sign-in and when a session is restored (spec 4): the groups
 * this user may use go into the session store. Best effort: a failure leaves the map empty and
 * the screens that need groups ask again.
 */
export async function loadUserGroups(): Promise<void> {
  try {
    setUserGroups(await getUserGroups())
  } catch {
    // Not worth a toast: nothing the user asked for failed.
  }
}
