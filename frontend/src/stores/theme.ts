import { STORAGE_KEYS } from '@/config'
import { readString, writeString } from '@/lib/storage'
import { createStore, useStore } from './create-store'

export type Theme = 'light' | 'dark'

function readTheme(): Theme {
  return readString(STORAGE_KEYS.theme) === 'dark' ? 'dark' : 'light'
}

function apply(theme: Theme): void {
  document.documentElement.classList.toggle('dark', theme === 'dark')
  document.documentElement.style.colorScheme = theme
}

export const themeStore = createStore<Theme>(readTheme())
apply(themeStore.get())

export function setTheme(theme: Theme): void {
  writeString(STORAGE_KEYS.theme, theme)
  apply(theme)
  themeStore.set(theme)
}

export function toggleTheme(): void {
  setTheme(themeStore.get() === 'dark' ? 'light' : 'dark')
}

export function useTheme(): Theme {
  return useStore(themeStore)
}
