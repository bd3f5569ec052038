import '@testing-library/jest-dom/vitest'
import { cleanup, configure } from '@testing-library/react'
import { toast } from 'sonner'
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest'
import { resetAuthMocks } from '@/features/auth/mocks/handlers'
import { resetChannelMocks } from '@/features/channels/mocks/handlers'
import { resetGroupMocks } from '@/features/groups/mocks/handlers'
import { resetInvoiceMocks } from '@/features/invoices/mocks/handlers'
import { noticeStore } from '@/features/notice/api/notice'
import { setMockNotice } from '@/features/notice/mocks/handlers'
import { resetOwnerMocks } from '@/features/owners/mocks/handlers'
import { resetPaymentMocks } from '@/features/payment/mocks/handlers'
import { relayCalls } from '@/features/playground/mocks/handlers'
import { resetPricingMocks } from '@/features/pricing/mocks/handlers'
import { resetRedemptionMocks } from '@/features/redemptions/mocks/handlers'
import { resetSettingsMocks } from '@/features/settings/mocks/handlers'
import { resetTelegramMocks } from '@/features/telegram/mocks/handlers'
import { resetTokenMocks } from '@/features/tokens/mocks/handlers'
import { resetUserMocks } from '@/features/users/mocks/handlers'
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

/**
 * Test files share their worker's modules and jsdom window (`isolate: false` in vite.config.ts:
 * a fresh environment per file cost more than half the run). So each file starts from what a
 * fresh one would give it: every mock server's data as first loaded, no stored notice or
 * pending toast, no document title or attributes and no clipboard stub left by an earlier file.
 */
function startLikeAFreshFile() {
  resetChannelMocks()
  resetGroupMocks()
  resetInvoiceMocks()
  resetOwnerMocks()
  resetPaymentMocks()
  resetPricingMocks()
  resetRedemptionMocks()
  resetSettingsMocks()
  resetTelegramMocks()
  resetUserMocks()
  setMockNotice('')
  noticeStore.set({ text: '', open: false })
  relayCalls.length = 0
  // A toast raised after the last test of an earlier file must not show up in this one.
  toast.dismiss()
  vi.useRealTimers()
  sessionStorage.clear()
  for (const el of [document.documentElement, document.body]) {
    for (const name of el.getAttributeNames()) el.removeAttribute(name)
  }
  document.body.replaceChildren()
  // Not the <style> elements: modules inject them once, on first import.
  document.head.querySelectorAll('title, script').forEach((el) => el.remove())
  Reflect.deleteProperty(navigator, 'clipboard')
}

beforeAll(async () => {
  startLikeAFreshFile()
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
