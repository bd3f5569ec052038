import { STORAGE_KEYS } from '@/config'
import { readJSON, removeKey, writeJSON } from '@/lib/storage'
import type { User } from '@/types/api'
import { createStore, useStore } from './create-store'

export interface SessionState {
  user: User | null
  /** Why the last session ended: the user signed out, or the server answered 401. */
  endedBy: 'logout' | 'unauthorized' | null
}

function initialState(): SessionState {
  return { user: readJSON<User>(STORAGE_KEYS.user), endedBy: null }
}

export const sessionStore = createStore<SessionState>(initialState())

export function setUser(user: User): void {
  writeJSON(STORAGE_KEYS.user, user)
  sessionStore.set({ user, endedBy: null })
}

/**
 * Clears the stored user (localStorage `user`) and the user in app state. A late 401 after a
 * sign-out does not rewrite why the session ended.
 */
export function clearUser(reason: 'logout' | 'unauthorized'): void {
  removeKey(STORAGE_KEYS.user)
  const prev = sessionStore.get()
  if (!prev.user && prev.endedBy) return
  sessionStore.set({ user: null, endedBy: reason })
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
