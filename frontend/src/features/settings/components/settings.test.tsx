import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { resetSettingsMocks } from '../mocks/handlers'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

function signIn() {
  resetAuthMocks(mockRoot)
  setUser(mockRoot)
}

beforeEach(() => resetSettingsMocks())

describe('settings screen', () => {
  it('renders inputs by kind with the stored values and sends only the changed keys', async () => {
    const puts: unknown[] = []
    server.use(
      http.put('*/api/option', async ({ request }) => {
        const body = await request.json()
        puts.push(body)
        return HttpResponse.json({ success: true, message: '', data: body })
      }),
    )
    signIn()
    renderApp('/panel/setting')
    const general = await screen.findByTestId('settings-section-general')
    expect(within(general).getByLabelText('每美元额度')).toHaveValue(500000)
    expect(within(general).getByRole('switch', { name: '以货币形式显示额度' })).toBeChecked()

    const user = userEvent.setup()
    await user.click(within(general).getByRole('switch', { name: '以货币形式显示额度' }))
    const links = within(general).getByLabelText('聊天客户端列表（JSON 数组）')
    await user.clear(links)
    await user.click(links)
    await user.paste('{"a":1}')
    await user.click(within(general).getByTestId('settings-save-general'))
    expect(await within(general).findByText('需要 JSON 数组')).toBeInTheDocument()
    expect(puts).toEqual([])

    await user.clear(links)
    await user.click(links)
    await user.paste('[]')
    const perUnit = within(general).getByLabelText('每美元额度')
    await user.clear(perUnit)
    await user.type(perUnit, '0')
    await user.click(within(general).getByTestId('settings-save-general'))
    expect(await within(general).findByText('取值范围为 1 到 1000000000')).toBeInTheDocument()
    await user.clear(perUnit)
    await user.type(perUnit, '1000000')
    await user.click(within(general).getByTestId('settings-save-general'))
    await waitFor(() =>
      expect(puts).toEqual([
        { key: 'DisplayInCurrencyEnabled', value: false },
        { key: 'QuotaPerUnit', value: '1000000' },
      ]),
    )
    expect(await screen.findByText('已保存 2 项设置')).toBeInTheDocument()
  })

  it('secrets are write-only: blank, marked as set, sent only when typed; unknown keys show under other', async () => {
    const puts: unknown[] = []
    server.use(
      http.put('*/api/option', async ({ request }) => {
        const body = await request.json()
        puts.push(body)
        return HttpResponse.json({ success: true, message: '', data: body })
      }),
    )
    signIn()
    renderApp('/panel/setting')
    const user = userEvent.setup()
    await user.click(await screen.findByTestId('settings-tab-system'))
    const smtp = await screen.findByTestId('settings-section-smtp')
    const secret = within(smtp).getByLabelText('SMTP 密码')
    expect(secret).toHaveValue('')
    expect(secret).toHaveAttribute('placeholder', '已设置；留空则保持不变')
    await user.click(within(smtp).getByTestId('settings-save-smtp'))
    expect(await screen.findByText('没有需要保存的修改')).toBeInTheDocument()
    await user.type(secret, 'p4ss')
    await user.click(within(smtp).getByTestId('settings-save-smtp'))
    await waitFor(() => expect(puts).toEqual([{ key: 'SMTPToken', value: 'p4ss' }]))

    await user.click(screen.getByTestId('settings-tab-other'))
    const unknown = await screen.findByTestId('settings-section-unknown')
    expect(within(unknown).getByLabelText('FutureOption')).toHaveValue('x')
  })

  it('a refused value is shown by the central handler', async () => {
    server.use(
      http.put('*/api/option', () =>
        HttpResponse.json({ success: false, message: 'RetryTimes must be between 0 and 10', code: 'out_of_range' }, { status: 400 }),
      ),
    )
    signIn()
    renderApp('/panel/setting')
    const section = await screen.findByTestId('settings-section-channels')
    const user = userEvent.setup()
    await user.clear(within(section).getByLabelText('重试次数'))
    await user.type(within(section).getByLabelText('重试次数'), '3')
    await user.click(within(section).getByTestId('settings-save-channels'))
    expect(await screen.findByText('错误：有数值超出了允许的范围。')).toBeInTheDocument()
  })

  it('administrators (not root) are told they lack the permission', async () => {
    resetAuthMocks({ ...mockRoot, role: 10 })
    setUser({ ...mockRoot, role: 10 })
    renderApp('/panel/setting')
    expect(await screen.findByTestId('no-permission')).toBeInTheDocument()
  })
})
