import { act, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { renderWithProviders } from '@/test/render'
import { CopyField } from './copy-field'

// Test files share one jsdom window (isolate: false): put back what this file replaces.
const { createObjectURL, revokeObjectURL } = URL
const { setPointerCapture } = Element.prototype
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
  URL.createObjectURL = createObjectURL
  URL.revokeObjectURL = revokeObjectURL
  if (setPointerCapture) Element.prototype.setPointerCapture = setPointerCapture
  else Reflect.deleteProperty(Element.prototype, 'setPointerCapture')
})

describe('copy toast', () => {
  it('stays until closed and downloads what was copied', async () => {
    // Fake time from the start, so that the toast's timers (if it had any) are fake too.
    vi.useFakeTimers({ shouldAdvanceTime: true })
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime })
    const writeText = vi.spyOn(navigator.clipboard, 'writeText').mockResolvedValue()
    const created: Blob[] = []
    URL.createObjectURL = vi.fn((b: Blob) => {
      created.push(b)
      return 'blob:copied'
    }) as typeof URL.createObjectURL
    URL.revokeObjectURL = vi.fn()
    // jsdom lacks pointer capture, which the toast's swipe handling uses.
    Element.prototype.setPointerCapture ??= () => {}
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {})

    renderWithProviders(<CopyField value="sk-secret-key" label="key" testId="key" downloadName="key.txt" />)
    await user.click(screen.getByTestId('key-copy'))
    expect(writeText).toHaveBeenCalledWith('sk-secret-key')
    expect(await screen.findByText('复制成功！')).toBeInTheDocument()

    // A success toast would be gone after 1.5 s; the copy toast is not.
    await act(() => vi.advanceTimersByTimeAsync(2_000))
    expect(screen.getByText('复制成功！')).toBeInTheDocument()

    await user.click(screen.getByRole('button', { name: '下载' }))
    expect(click).toHaveBeenCalled()
    expect(created).toHaveLength(1)
    const read = await new Promise<string>((resolve) => {
      const reader = new FileReader()
      reader.onload = () => resolve(String(reader.result))
      reader.readAsText(created[0]!)
    })
    expect(read).toBe('sk-secret-key')
  })
})
