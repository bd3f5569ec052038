import '@testing-library/jest-dom/vitest'
import { cleanup, configure } from '@testing-library/react'
import { toast } from 'sonner'
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest'
import { resetAuthMocks } from '@/features/auth/mocks/handlers'
import { resetTokenMocks } from '@/features/tokens/mocks/handlers'
import { resetSessionStore } from '@/stores/session'
import { resetSiteStore } from '@/stores/site'
import { setTheme } from '@/stores/theme'
import { initTestI18n } from './i18n'
import { server } from './server'

// findBy*/waitFor wait up to 4 s (the default 1 s is too short for lazy routes under load).
configure({ asyncUtilTimeout: 4_000 })

// jsdom does not implement scrolling.
window.scrollTo = vi.fn() as unknown as typeof window.scrollTo

// jsdom has no ResizeObserver (radix Switch measures its thumb).
if (!('ResizeObserver' in globalThis)) {
  globalThis.ResizeObserver = class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver
}

beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' })
  await initTestI18n('zh_CN')
})

beforeEach(async () => {
  localStorage.clear()
  resetSessionStore()
  resetSiteStore()
  resetAuthMocks()
  resetTokenMocks()
  setTheme('light')
  await initTestI18n('zh_CN')
})

afterEach(() => {
  cleanup()
  toast.dismiss()
  server.resetHandlers()
})

afterAll(() => server.close())
