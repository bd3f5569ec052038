import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { ok, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { formatTimestamp } from '@/lib/format'
import { mockLease, mockLine, mockSystemInfo } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

const signIn = (user = mockRoot) => signInAs(user)

describe('system info screen', () => {
  it('shows CPU and memory use and the log; polls the log after the last line', async () => {
    const afters: (string | null)[] = []
    server.use(
      http.get('*/api/system/log', ({ request }) => {
        const after = new URL(request.url).searchParams.get('after')
        afters.push(after)
        if (after === null) {
          return ok({ lines: [mockLine(1), mockLine(2, 'boom', 'ERROR')], next: 2, truncated: false, capacity: 10 })
        }
        return ok({ lines: [mockLine(3, 'fresh')], next: 3, truncated: false, capacity: 10 })
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

  it('lists the background jobs with the node that runs each, and the idle ones', async () => {
    server.use(
      http.get('*/api/system/info', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: mockSystemInfo({
            leases: [
              mockLease({ name: 'telegram', holder: '12345-ab12CD34', expires_at: 1_735_689_630 }),
              mockLease({ name: 'task-poll', holder: '12345-ab12CD34' }),
              mockLease({ name: 'channel-test', holder: '67890-zz99YY88', held: false, expires_at: 1_735_689_000 }),
              mockLease({ name: 'local-ledger' }),
              mockLease({ name: 'invoice-2026-10', holder: '67890-zz99YY88' }),
              mockLease({ name: 'mystery-job', held: false }),
            ],
          }),
        }),
      ),
    )
    signIn({ ...mockRoot, role: 10 })
    renderApp('/panel/system_info')
    const card = await screen.findByTestId('system-leases')
    expect(within(card).getByRole('heading', { name: '后台任务' })).toBeInTheDocument()

    const row = (name: string) => within(card).getByTestId(`system-lease-${name}`)
    const cell = (name: string, part: string) => within(row(name)).getByTestId(`system-lease-${part}`)
    expect(cell('telegram', 'job')).toHaveTextContent('Telegram 机器人')
    expect(cell('task-poll', 'job')).toHaveTextContent('Midjourney / Suno 任务轮询')
    expect(cell('channel-test', 'job')).toHaveTextContent('定时渠道测试')
    expect(cell('local-ledger', 'job')).toHaveTextContent('单节点账本')
    expect(cell('invoice-2026-10', 'job')).toHaveTextContent('月度账单（invoice-2026-10）')
    expect(cell('mystery-job', 'job')).toHaveTextContent(/^mystery-job$/)

    const holder = cell('telegram', 'holder')
    expect(holder).toHaveTextContent('12345-ab12CD34')
    expect(holder).toHaveClass('font-mono')
    expect(cell('telegram', 'state')).toHaveTextContent('运行中')
    expect(cell('telegram', 'state')).toHaveAttribute('title', '运行于节点 12345-ab12CD34')
    expect(cell('telegram', 'expires')).toHaveTextContent(formatTimestamp(1_735_689_630))

    expect(cell('channel-test', 'holder')).toHaveTextContent('67890-zz99YY88')
    expect(cell('channel-test', 'state')).toHaveTextContent('空闲（已过期）')
    expect(cell('channel-test', 'state')).toHaveAttribute('title', '租约已过期，目前没有节点运行此任务。')
    expect(cell('channel-test', 'expires')).toHaveTextContent(formatTimestamp(1_735_689_000))
    expect(cell('mystery-job', 'state')).toHaveTextContent('空闲（已过期）')
    expect(within(card).queryByTestId('system-leases-empty')).not.toBeInTheDocument()
  })

  it('says so when no cluster job has run yet, also for a node that does not report leases', async () => {
    const infos = [mockSystemInfo({ leases: [] }), { ...mockSystemInfo(), leases: undefined }]
    for (const data of infos) {
      server.use(http.get('*/api/system/info', () => HttpResponse.json({ success: true, message: '', data })))
      signIn()
      const { unmount } = renderApp('/panel/system_info')
      const card = await screen.findByTestId('system-leases')
      expect(within(card).getByTestId('system-leases-empty')).toHaveTextContent('尚无集群任务运行过')
      expect(within(card).queryByTestId('system-lease-telegram')).not.toBeInTheDocument()
      unmount()
    }
  })
})
