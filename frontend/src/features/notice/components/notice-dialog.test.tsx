import { act, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http } from 'msw'
import { afterEach, describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { isVersionMismatch } from '@/features/site/components/site-status-loader'
import { setUser } from '@/stores/session'
import { ok } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { noticeStore } from '../api/notice'
import { setMockNotice } from '../mocks/handlers'

afterEach(() => {
  setMockNotice('')
  act(() => noticeStore.set({ text: '', open: false }))
})

describe('notice', () => {
  it('a new notice opens the dialog once, is stored, and renders as HTML', async () => {
    localStorage.removeItem('notice')
    setMockNotice('<p>Maintenance <b>tonight</b></p>')
    const first = renderApp('/')
    const dialog = await screen.findByTestId('notice-dialog')
    expect(dialog).toHaveTextContent('公告')
    expect(screen.getByTestId('notice-content').querySelector('b')).toHaveTextContent('tonight')
    expect(localStorage.getItem('notice')).toBe('<p>Maintenance <b>tonight</b></p>')
    await userEvent.setup().keyboard('{Escape}')
    await waitFor(() => expect(screen.queryByTestId('notice-dialog')).toBeNull())
    first.unmount()

    // The same notice again: stays closed, but the header button shows the stored copy.
    act(() => noticeStore.set({ text: '', open: false }))
    resetAuthMocks(mockRoot)
    setUser(mockRoot)
    renderApp('/panel/dashboard')
    const button = await screen.findByTestId('notice-button')
    await new Promise((r) => setTimeout(r, 300))
    expect(screen.queryByTestId('notice-dialog')).toBeNull()
    await userEvent.setup().click(button)
    expect(await screen.findByTestId('notice-content')).toHaveTextContent('Maintenance tonight')
  })

  it('an empty notice keeps the stored copy and the dialog closed', async () => {
    localStorage.setItem('notice', 'older text')
    setMockNotice('')
    resetAuthMocks(mockRoot)
    setUser(mockRoot)
    renderApp('/panel/dashboard')
    const button = await screen.findByTestId('notice-button')
    await new Promise((r) => setTimeout(r, 300))
    expect(screen.queryByTestId('notice-dialog')).toBeNull()
    await userEvent.setup().click(button)
    expect(await screen.findByTestId('notice-content')).toHaveTextContent('older text')
  })
})

describe('version check', () => {
  it('compares major and minor; empty and 0.0.0 differ', () => {
    expect(isVersionMismatch('0.17.0', 'v0.17')).toBe(false)
    expect(isVersionMismatch('v0.17', 'v0.17')).toBe(false)
    expect(isVersionMismatch('v0.17.3', 'v0.17')).toBe(false)
    expect(isVersionMismatch('0.18.0', 'v0.17')).toBe(true)
    expect(isVersionMismatch('1.17.0', 'v0.17')).toBe(true)
    expect(isVersionMismatch('', 'v0.17')).toBe(true)
    expect(isVersionMismatch('0.0.0', 'v0.17')).toBe(true)
    expect(isVersionMismatch(undefined, 'v0.17')).toBe(true)
  })

  it('a server of another version shows the refresh tip', async () => {
    server.use(
      http.get('*/api/status', () =>
        ok({ system_name: 'Switchboard', version: 'v0.18.0', quota_per_unit: 500000, display_in_currency: true, language: 'zh_CN' }),
      ),
    )
    renderApp('/')
    expect(await screen.findByText(/Shift \+ F5/)).toHaveTextContent('v0.18.0')
  })
})
