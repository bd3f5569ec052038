import { STORAGE_KEYS } from '@/config'
import { readJSON, removeKey, writeJSON } from '@/lib/storage'
import type { User, UserGroupMap } from '@/types/api'
import { createStore, useStore } from './create-store'

export interface SessionState {
  user: User | null
  /** Why the user was last signed out: by their own choice, or because the server answered 401. */
  endedBy: 'logout' | 'unauthorized' | null
  /** The groups this user may use (spec 3, account state `userGroup`), loaded at sign-in. */
  userGroup: UserGroupMap | null
}

function initialState(): SessionState {
  return { user: readJSON<User>(STORAGE_KEYS.user), endedBy: null, userGroup: null }
}

export const sessionStore = createStore<SessionState>(initialState())

export function setUser(user: User): void {
  writeJSON(STORAGE_KEYS.user, user)
  sessionStore.set((prev) => ({ ...prev, user, endedBy: null }))
}

export function setUserGroups(userGroup: UserGroupMap): void {
  sessionStore.set((prev) => ({ ...prev, userGroup }))
}

/**
 * Clears the stored user (localStorage `user`) and the user in app state. A late 401 after a
 * sign-out does not rewrite why the user was signed out.
 */
export function clearUser(reason: 'logout' | 'unauthorized'): void {
  removeKey(STORAGE_KEYS.user)
  const prev = sessionStore.get()
  if (!prev.user && prev.endedBy) return
  sessionStore.set({ user: null, endedBy: reason, userGroup: null })
}

/** Re-read localStorage (used by tests). */
export function resetSessionStore(): void {
  sessionStore.set(initialState())
}

export function useSession(): SessionState {
  return useStore(sessionStore)
}

export function useUser(): User | null {
  return useStore(sessionStore).user
}

export function useUserGroups(): UserGroupMap | null {
  return useStore(sessionStore).userGroup
}
