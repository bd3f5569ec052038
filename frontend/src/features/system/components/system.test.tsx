import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockLine } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

function signIn(user = mockRoot) {
  resetAuthMocks(user)
  setUser(user)
}

describe('system info screen', () => {
  it('shows CPU and memory use and the log; polls the log after the last line', async () => {
    const afters: (string | null)[] = []
    server.use(
      http.get('*/api/system/log', ({ request }) => {
        const after = new URL(request.url).searchParams.get('after')
        afters.push(after)
        if (after === null) {
          return HttpResponse.json({ success: true, message: '', data: { lines: [mockLine(1), mockLine(2, 'boom', 'ERROR')], next: 2, truncated: false, capacity: 10 } })
        }
        return HttpResponse.json({ success: true, message: '', data: { lines: [mockLine(3, 'fresh')], next: 3, truncated: false, capacity: 10 } })
      }),
    )
    signIn()
    renderApp('/panel/system_info')
    expect(await screen.findByTestId('system-cpu')).toHaveTextContent('12.5%')
    expect(screen.getByTestId('system-memory')).toHaveTextContent('75.0%')
    expect(screen.getByText('已用 6.0 GiB / 共 8.0 GiB，本进程 150.0 MiB')).toBeInTheDocument()
    expect(screen.getByTestId('system-uptime')).toHaveTextContent('1 天 1 小时 1 分钟')
    await waitFor(() => expect(screen.getAllByTestId('system-log-line')).toHaveLength(2))
    expect(screen.getAllByTestId('system-log-line')[1]).toHaveTextContent('ERROR boom')

    const user = userEvent.setup()
    await user.selectOptions(screen.getByTestId('system-refresh'), '1000')
    await waitFor(() => expect(screen.getAllByTestId('system-log-line')).toHaveLength(3), { timeout: 3000 })
    expect(afters.slice(0, 2)).toEqual([null, '2'])
    await user.click(screen.getByTestId('system-log-clear'))
    await user.selectOptions(screen.getByTestId('system-refresh'), '0')
    expect(screen.getByTestId('system-log-empty')).toHaveTextContent('暂无日志')
  })

  it('administrators see the node info but not the server log', async () => {
    signIn({ ...mockRoot, role: 10 })
    renderApp('/panel/system_info')
    expect(await screen.findByTestId('system-cpu')).toBeInTheDocument()
    expect(screen.queryByTestId('system-log')).not.toBeInTheDocument()
  })

  it('a failed info call says what went wrong in place, with a retry', async () => {
    server.use(http.get('*/api/system/info', () => HttpResponse.json({ success: false, message: 'probe failed' }, { status: 503 })))
    signIn()
    renderApp('/panel/system_info')
    const failed = await screen.findByTestId('system-info-empty-error', {}, { timeout: 4000 })
    expect(failed).toHaveTextContent('probe failed')
    expect(within(failed).getByTestId('system-info-empty-retry')).toBeInTheDocument()
  })
})
