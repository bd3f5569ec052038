import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { ok, openDialog, openScreen } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { mockStatus } from '@/features/site/mocks/handlers'
import {
  MOCK_ALIPAY_PUBLIC_KEY,
  MOCK_WXPAY_PUBLIC_KEY,
  mockAlipayGateway,
  mockGateway,
  mockOrder,
  mockStripeGateway,
  mockWxpayGateway,
  paymentHandlers,
  resetPaymentMocks,
} from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

function signIn(role = 100) {
  const u = { ...mockRoot, role }
  resetAuthMocks(u)
  setUser(u)
  server.use(...paymentHandlers)
}

/** The bodies of every POST and PUT to /api/payment. */
function recordWrites() {
  const writes: { method: string; body: unknown }[] = []
  server.events.on('request:start', async ({ request }) => {
    if (new URL(request.url).pathname !== '/api/payment' || !['POST', 'PUT'].includes(request.method)) return
    writes.push({ method: request.method, body: await request.clone().json() })
  })
  return writes
}

afterEach(() => server.events.removeAllListeners())

const CONFIG_INVALID =
  '错误：支付接口配置无效：易支付请检查接口地址、商户 ID 和商户密钥；Stripe 请检查密钥和 Webhook 签名密钥；支付宝和微信支付请检查各项 ID 和密钥，以及收款币种是否为人民币。'

/** An RSA private key as PEM (PKCS#8), several lines, as pasted from a key file. */
const PRIVATE_KEY_PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7test+key/w==\n-----END PRIVATE KEY-----'

const wechat = mockGateway({
  id: 2,
  uuid: 'gw-0002',
  name: '微信支付',
  percent_fee: 0,
  fixed_fee: 0.3,
  currency: 'USD',
  enable: false,
  sort: 5,
  notify_domain: 'https://cb.example.com',
  config: { url: 'https://epay.example.com', pid: '2002', pay_type: 'wxpay' },
})

describe('payment screen', { timeout: 30_000 }, () => {
  it('is for administrators only', async () => {
    signIn(1)
    renderApp('/panel/payment')
    expect(await screen.findByTestId('no-permission')).toBeInTheDocument()
  })

  it('lists the gateways: type, currency, fees, enabled, sort; the empty state', async () => {
    resetPaymentMocks([mockGateway(), wechat])
    signIn()
    renderApp('/panel/payment')
    const table = await screen.findByTestId('gateways-table')
    const rows = within(table).getAllByTestId(/^gateway-row-/)
    // Sort descending.
    expect(rows.map((r) => within(r).getByTestId('gateway-name').textContent)).toEqual(['微信支付', '支付宝'])
    const alipay = within(table).getByTestId('gateway-row-1')
    expect(alipay).toHaveTextContent('易支付')
    expect(within(alipay).getByTestId('gateway-currency')).toHaveTextContent('CNY')
    expect(within(alipay).getByTestId('gateway-fees')).toHaveTextContent('5%')
    expect(within(alipay).getByTestId('gateway-toggle')).toHaveAttribute('aria-checked', 'true')
    const wx = within(table).getByTestId('gateway-row-2')
    expect(within(wx).getByTestId('gateway-fees')).toHaveTextContent('$0.30')
    expect(within(wx).getByTestId('gateway-toggle')).toHaveAttribute('aria-checked', 'false')

    resetPaymentMocks([])
    const user = userEvent.setup()
    await user.type(screen.getByTestId('gateway-search'), 'nothing{Enter}')
    expect(await screen.findByTestId('gateways-empty')).toHaveTextContent('没有符合条件的支付方式')
  })

  it('creates a gateway: checks the fields like the server, and the merchant key is required', async () => {
    resetPaymentMocks([])
    signIn()
    const writes = recordWrites()
    const { user } = openScreen('/panel/payment')
    expect(await screen.findByTestId('gateways-empty')).toHaveTextContent('还没有支付方式')
    await user.click(screen.getByTestId('gateway-create'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    const field = (label: string) => within(dialog).getByLabelText(label)

    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('请输入名称')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入图标地址')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入接口地址')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入商户 ID')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入商户密钥')).toBeInTheDocument()

    await user.type(field('名称'), '支付宝')
    await user.type(field('图标'), 'https://pay.example.com/alipay.png')
    await user.clear(field('比例手续费'))
    await user.type(field('比例手续费'), '5')
    await user.type(field('接口地址'), 'ftp://pay.example.com')
    await user.type(field('回调地址'), 'https://cb.example.com/notify')
    await user.type(field('商户 ID'), '1001')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('比例手续费须为 0 到 1 之间（不含 1）的小数，例如 0.05')).toBeInTheDocument()
    expect(within(dialog).getByText('接口地址须以 http:// 或 https:// 开头')).toBeInTheDocument()
    expect(within(dialog).getByText(/回调地址须为 http:\/\/ 或 https:\/\/ 开头的站点地址/)).toBeInTheDocument()
    expect(within(dialog).getByText('请输入商户密钥')).toBeInTheDocument()
    expect(writes).toEqual([])

    await user.clear(field('比例手续费'))
    await user.type(field('比例手续费'), '0.05')
    expect(within(dialog).getByText(/当前为 5%/)).toBeInTheDocument()
    await user.clear(field('接口地址'))
    await user.type(field('接口地址'), 'https://pay.example.com')
    await user.clear(field('回调地址'))
    await user.type(field('回调地址'), 'https://cb.example.com')
    await user.selectOptions(field('支付渠道'), 'alipay')
    await user.clear(field('排序'))
    await user.type(field('排序'), '10')
    await user.type(field('商户密钥'), 'secret-key')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))

    await waitFor(() =>
      expect(writes).toEqual([
        {
          method: 'POST',
          body: {
            name: '支付宝',
            type: 'epay',
            icon: 'https://pay.example.com/alipay.png',
            enable: true,
            fixed_fee: 0,
            percent_fee: 0.05,
            currency: 'CNY',
            notify_domain: 'https://cb.example.com',
            sort: 10,
            config: { url: 'https://pay.example.com', pid: '1001', pay_type: 'alipay', key: 'secret-key' },
          },
        },
      ]),
    )
    expect(await screen.findByText('支付方式已添加！')).toBeInTheDocument()
    expect(await screen.findByTestId('gateway-row-1')).toHaveTextContent('支付宝')
  })

  it('edits with the key left blank (sent as ""), switches a gateway on and deletes one after confirmation', async () => {
    resetPaymentMocks([mockGateway(), wechat])
    signIn()
    const writes = recordWrites()
    let deleted = ''
    server.use(
      http.delete('*/api/payment/:id', ({ params }) => {
        deleted = String(params.id)
        return HttpResponse.json({ success: true, message: '' })
      }),
    )
    const { user } = openScreen('/panel/payment')

    await user.click(within(await screen.findByTestId('gateway-row-2')).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    expect(within(dialog).getByLabelText('名称')).toHaveValue('微信支付')
    expect(within(dialog).getByLabelText('商户密钥')).toHaveValue('')
    expect(within(dialog).getByLabelText('商户密钥')).toHaveAttribute('placeholder', '留空则保留原密钥')
    expect(within(dialog).getByTestId('gateway-key-hint')).toHaveTextContent('已保存密钥')
    await user.clear(within(dialog).getByLabelText('名称'))
    await user.type(within(dialog).getByLabelText('名称'), 'WeChat Pay')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    await waitFor(() =>
      expect(writes[0]).toEqual({
        method: 'PUT',
        body: {
          id: 2,
          name: 'WeChat Pay',
          type: 'epay',
          icon: 'https://pay.example.com/alipay.png',
          enable: false,
          fixed_fee: 0.3,
          percent_fee: 0,
          currency: 'USD',
          notify_domain: 'https://cb.example.com',
          sort: 5,
          config: { url: 'https://epay.example.com', pid: '2002', pay_type: 'wxpay', key: '' },
        },
      }),
    )
    expect(await screen.findByText('支付方式已保存！')).toBeInTheDocument()

    // The switch sends the row as it is, the key kept.
    await waitFor(() => expect(within(screen.getByTestId('gateway-row-2')).getByTestId('gateway-name')).toHaveTextContent('WeChat Pay'))
    await user.click(within(screen.getByTestId('gateway-row-2')).getByTestId('gateway-toggle'))
    await waitFor(() => expect(writes).toHaveLength(2))
    expect(writes[1]).toEqual({ method: 'PUT', body: { ...(writes[0]!.body as object), enable: true } })
    expect(await screen.findByText('支付方式已启用！')).toBeInTheDocument()
    await waitFor(() => expect(within(screen.getByTestId('gateway-row-2')).getByTestId('gateway-toggle')).toHaveAttribute('aria-checked', 'true'))

    await user.click(within(screen.getByTestId('gateway-row-1')).getByTestId('gateway-delete'))
    const confirm = await screen.findByTestId('gateway-delete-dialog')
    expect(confirm).toHaveTextContent('支付宝')
    expect(deleted).toBe('')
    await user.click(within(confirm).getByTestId('gateway-delete-dialog-confirm'))
    await waitFor(() => expect(deleted).toBe('1'))
    expect(await screen.findByText('支付方式已删除！')).toBeInTheDocument()
  })

  it('shows a server refusal in Chinese, from its error code', async () => {
    resetPaymentMocks([mockGateway({ config: {} })])
    signIn()
    const { user } = openScreen('/panel/payment')
    // The configuration could not be opened (listed as {}): switching sends an empty address.
    await user.click(within(await screen.findByTestId('gateway-row-1')).getByTestId('gateway-toggle'))
    expect(await screen.findByText(CONFIG_INVALID)).toBeInTheDocument()
    expect(screen.queryByText(/config\.url/)).not.toBeInTheDocument()
  })

  it('creates a Stripe gateway: its own fields, both secrets required and checked, only they are sent', async () => {
    resetPaymentMocks([])
    signIn()
    const writes = recordWrites()
    const { user, dialog } = await openDialog('/panel/payment', 'gateway-create', 'gateway-form-dialog')
    const field = (label: string) => within(dialog).getByLabelText(label)

    // Epay fields typed before switching are neither checked nor sent.
    await user.type(field('接口地址'), 'https://pay.example.com')
    await user.type(field('商户 ID'), '1001')
    expect(within(dialog).getByRole('option', { name: 'Stripe' })).toBeInTheDocument()
    await user.selectOptions(field('类型'), 'stripe')
    expect(within(dialog).queryByTestId('gateway-epay-fields')).not.toBeInTheDocument()
    expect(within(dialog).queryByLabelText('接口地址')).not.toBeInTheDocument()
    expect(within(dialog).getByTestId('gateway-stripe-fields')).toHaveTextContent('Stripe 接口')
    expect(field('Stripe 密钥')).toHaveAttribute('type', 'password')
    expect(field('Stripe 密钥')).toHaveAttribute('autocomplete', 'off')
    expect(field('Webhook 签名密钥')).toHaveAttribute('type', 'password')
    expect(field('Webhook 签名密钥')).toHaveAttribute('autocomplete', 'off')
    expect(within(dialog).getByTestId('gateway-stripe-currency')).toHaveTextContent('Stripe 按所选收款币种（CNY）向用户收款')
    expect(within(dialog).getByTestId('stripe-webhook-later')).toHaveTextContent('保存后，可在列表中查看需要在 Stripe 中登记的 Webhook 地址。')

    await user.type(field('名称'), 'Stripe')
    await user.type(field('图标'), 'https://pay.example.com/stripe.png')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('请输入 Stripe 密钥')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入 Webhook 签名密钥')).toBeInTheDocument()

    // A publishable key and a secret of the wrong kind are refused, in Chinese.
    await user.type(field('Stripe 密钥'), 'pk_test_123')
    await user.type(field('Webhook 签名密钥'), 'sk_test_456')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('Stripe 密钥须以 sk_ 或 rk_ 开头（不要填写以 pk_ 开头的可发布密钥）')).toBeInTheDocument()
    expect(within(dialog).getByText('Webhook 签名密钥须以 whsec_ 开头')).toBeInTheDocument()
    expect(writes).toEqual([])

    await user.clear(field('Stripe 密钥'))
    await user.type(field('Stripe 密钥'), 'sk_test_123')
    await user.clear(field('Webhook 签名密钥'))
    await user.type(field('Webhook 签名密钥'), 'whsec_456 ')
    await user.selectOptions(field('收款币种'), 'USD')
    expect(within(dialog).getByTestId('gateway-stripe-currency')).toHaveTextContent('（USD）')
    await user.clear(field('固定手续费（美元）'))
    await user.type(field('固定手续费（美元）'), '0.3')
    await user.clear(field('比例手续费'))
    await user.type(field('比例手续费'), '0.029')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))

    await waitFor(() =>
      expect(writes).toEqual([
        {
          method: 'POST',
          body: {
            name: 'Stripe',
            type: 'stripe',
            icon: 'https://pay.example.com/stripe.png',
            enable: true,
            fixed_fee: 0.3,
            percent_fee: 0.029,
            currency: 'USD',
            notify_domain: '',
            sort: 0,
            config: { secret_key: 'sk_test_123', webhook_secret: 'whsec_456' },
          },
        },
      ]),
    )
    expect(await screen.findByText('支付方式已添加！')).toBeInTheDocument()
    const row = await screen.findByTestId('gateway-row-1')
    expect(row).toHaveTextContent('Stripe')
    expect(within(row).getByTestId('gateway-webhook')).toHaveAccessibleName('Webhook 地址')
  })

  it('edits a Stripe gateway with blank secrets (sent as ""), shows its webhook address; the switch keeps them', async () => {
    resetPaymentMocks([mockStripeGateway({ notify_domain: 'https://cb.example.com' })])
    signIn()
    const writes = recordWrites()
    const { user } = openScreen('/panel/payment')

    await user.click(within(await screen.findByTestId('gateway-row-3')).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    expect(within(dialog).getByLabelText('类型')).toHaveValue('stripe')
    for (const label of ['Stripe 密钥', 'Webhook 签名密钥']) {
      expect(within(dialog).getByLabelText(label)).toHaveValue('')
      expect(within(dialog).getByLabelText(label)).toHaveAttribute('placeholder', '留空则保留原密钥')
    }
    expect(within(dialog).getByTestId('gateway-secret-key-hint')).toHaveTextContent('已保存密钥；留空则保留原密钥，填写则替换。')
    expect(within(dialog).getByTestId('gateway-webhook-secret-hint')).toHaveTextContent('已保存密钥')
    // The webhook address: the gateway's callback origin.
    expect(within(dialog).getByTestId('stripe-webhook-url')).toHaveValue('https://cb.example.com/api/payment/notify/gw-0003')
    expect(within(dialog).getByTestId('stripe-webhook-hint')).toHaveTextContent('并选择事件 checkout.session.completed')
    // It follows a callback address being typed.
    await user.clear(within(dialog).getByLabelText('回调地址'))
    await user.type(within(dialog).getByLabelText('回调地址'), 'https://hooks.example.com/')
    expect(within(dialog).getByTestId('stripe-webhook-url')).toHaveValue('https://hooks.example.com/api/payment/notify/gw-0003')
    await user.clear(within(dialog).getByLabelText('回调地址'))
    await user.type(within(dialog).getByLabelText('回调地址'), 'https://cb.example.com')

    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    const saved = {
      id: 3,
      name: 'Stripe',
      type: 'stripe',
      icon: 'https://pay.example.com/stripe.png',
      enable: true,
      fixed_fee: 0.3,
      percent_fee: 0.029,
      currency: 'USD',
      notify_domain: 'https://cb.example.com',
      sort: 0,
      config: { secret_key: '', webhook_secret: '' },
    }
    await waitFor(() => expect(writes).toEqual([{ method: 'PUT', body: saved }]))
    expect(await screen.findByText('支付方式已保存！')).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByTestId('gateway-form-dialog')).not.toBeInTheDocument())

    // The switch sends Stripe's config shape, the secrets kept.
    await user.click(within(screen.getByTestId('gateway-row-3')).getByTestId('gateway-toggle'))
    await waitFor(() => expect(writes).toHaveLength(2))
    expect(writes[1]).toEqual({ method: 'PUT', body: { ...saved, enable: false } })
    expect(await screen.findByText('支付方式已停用！')).toBeInTheDocument()
  })

  it('asks for the new type\'s secrets when an edit changes the type', async () => {
    resetPaymentMocks([mockGateway()])
    signIn()
    const writes = recordWrites()
    const { user } = openScreen('/panel/payment')
    await user.click(within(await screen.findByTestId('gateway-row-1')).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    await user.selectOptions(within(dialog).getByLabelText('类型'), 'stripe')
    expect(within(dialog).getByLabelText('Stripe 密钥')).toHaveAttribute('placeholder', 'sk_live_…')
    expect(within(dialog).getByTestId('gateway-secret-key-hint')).not.toHaveTextContent('已保存密钥')
    // The gateway already exists: its webhook address is known.
    expect(within(dialog).getByTestId('stripe-webhook-url')).toHaveValue(`${window.location.origin}/api/payment/notify/gw-0001`)
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('请输入 Stripe 密钥')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入 Webhook 签名密钥')).toBeInTheDocument()
    expect(writes).toEqual([])
  })

  it("shows a Stripe gateway's webhook address from its row: the site's server address, else this page's origin", async () => {
    resetPaymentMocks([mockGateway(), mockStripeGateway()])
    signIn()
    const status = { ...mockStatus, server_address: 'https://api.example.com/' }
    server.use(http.get('*/api/status', () => ok(status)))
    const { user } = openScreen('/panel/payment')
    const writeText = vi.spyOn(navigator.clipboard, 'writeText').mockResolvedValue()

    expect(within(await screen.findByTestId('gateway-row-1')).queryByTestId('gateway-webhook')).not.toBeInTheDocument()
    await user.click(within(screen.getByTestId('gateway-row-3')).getByTestId('gateway-webhook'))
    const dialog = await screen.findByTestId('stripe-webhook-dialog')
    expect(dialog).toHaveTextContent('Stripe Webhook 地址')
    await waitFor(() =>
      expect(within(dialog).getByTestId('stripe-webhook-url')).toHaveValue('https://api.example.com/api/payment/notify/gw-0003'),
    )
    expect(within(dialog).getByTestId('stripe-webhook-hint')).toHaveTextContent(
      '在 Stripe 控制台的“开发人员 → Webhook”中以此地址添加端点，并选择事件 checkout.session.completed。',
    )
    await user.click(within(dialog).getByTestId('stripe-webhook-url-copy'))
    expect(writeText).toHaveBeenCalledWith('https://api.example.com/api/payment/notify/gw-0003')
    expect(await screen.findByText('复制成功！')).toBeInTheDocument()
  })

  it("falls back to this page's origin for the webhook address, and shows a refused Stripe key in Chinese", async () => {
    resetPaymentMocks([mockStripeGateway()])
    signIn()
    server.use(
      http.put('*/api/payment', () =>
        HttpResponse.json(
          { success: false, code: 'payment_config_invalid', message: 'config.secret_key: Invalid API Key provided' },
          { status: 400 },
        ),
      ),
    )
    const { user } = openScreen('/panel/payment')

    await user.click(within(await screen.findByTestId('gateway-row-3')).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    expect(within(dialog).getByTestId('stripe-webhook-url')).toHaveValue(`${window.location.origin}/api/payment/notify/gw-0003`)
    await user.type(within(dialog).getByLabelText('Stripe 密钥'), 'rk_live_revoked')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await screen.findByText(CONFIG_INVALID)).toBeInTheDocument()
    expect(screen.queryByText(/Invalid API Key/)).not.toBeInTheDocument()
    expect(screen.getByTestId('gateway-form-dialog')).toBeInTheDocument()
  })

  it('creates an Alipay gateway: the currency is set to CNY and locked, its own fields are checked, only they are sent', async () => {
    resetPaymentMocks([])
    signIn()
    const writes = recordWrites()
    const { user, dialog } = await openDialog('/panel/payment', 'gateway-create', 'gateway-form-dialog')
    const field = (label: string) => within(dialog).getByLabelText(label)

    // A currency chosen before the type: Alipay charges in yuan only.
    await user.selectOptions(field('收款币种'), 'USD')
    expect(field('收款币种')).toBeEnabled()
    expect(within(field('类型')).getByRole('option', { name: '支付宝' })).toHaveValue('alipay')
    expect(within(field('类型')).getByRole('option', { name: '微信支付' })).toHaveValue('wxpay')
    await user.selectOptions(field('类型'), 'alipay')
    expect(field('收款币种')).toHaveValue('CNY')
    expect(field('收款币种')).toBeDisabled()
    expect(within(dialog).getByTestId('gateway-currency-hint')).toHaveTextContent('支付宝仅支持人民币（CNY）收款。')
    expect(within(dialog).queryByTestId('gateway-epay-fields')).not.toBeInTheDocument()
    expect(within(dialog).getByTestId('gateway-alipay-fields')).toHaveTextContent('支付宝接口')
    // Nothing to register: the notification address goes with each order.
    expect(within(dialog).getByTestId('gateway-notify-auto')).toHaveTextContent('告诉支付宝，无需在其后台登记')
    // Long keys are pasted into text areas; the mode defaults to the web cashier.
    expect(field('支付宝公钥').tagName).toBe('TEXTAREA')
    expect(field('应用私钥').tagName).toBe('TEXTAREA')
    expect(field('支付产品')).toHaveValue('page')

    await user.type(field('名称'), '支付宝官方')
    await user.type(field('图标'), 'https://pay.example.com/alipay.png')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('请输入应用 APPID')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入支付宝公钥')).toBeInTheDocument()
    expect(within(dialog).getByText('请输入应用私钥')).toBeInTheDocument()

    await user.type(field('应用 APPID'), '2021-0001')
    await user.click(field('应用私钥'))
    await user.paste('not a key!')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('应用 APPID 须为数字')).toBeInTheDocument()
    expect(within(dialog).getByText('密钥须为 PEM 文本（-----BEGIN …）或纯 base64 文本')).toBeInTheDocument()
    expect(writes).toEqual([])

    await user.clear(field('应用 APPID'))
    await user.type(field('应用 APPID'), '2021000123456789')
    await user.selectOptions(field('支付产品'), 'qrcode')
    await user.click(field('支付宝公钥'))
    await user.paste(` ${MOCK_ALIPAY_PUBLIC_KEY}\n`)
    await user.clear(field('应用私钥'))
    await user.click(field('应用私钥'))
    await user.paste(`${PRIVATE_KEY_PEM}\n`)
    await user.click(within(dialog).getByTestId('gateway-form-submit'))

    await waitFor(() =>
      expect(writes).toEqual([
        {
          method: 'POST',
          body: {
            name: '支付宝官方',
            type: 'alipay',
            icon: 'https://pay.example.com/alipay.png',
            enable: true,
            fixed_fee: 0,
            percent_fee: 0,
            currency: 'CNY',
            notify_domain: '',
            sort: 0,
            config: {
              app_id: '2021000123456789',
              mode: 'qrcode',
              alipay_public_key: MOCK_ALIPAY_PUBLIC_KEY,
              private_key: PRIVATE_KEY_PEM,
            },
          },
        },
      ]),
    )
    expect(await screen.findByText('支付方式已添加！')).toBeInTheDocument()
    const row = await screen.findByTestId('gateway-row-1')
    expect(row).toHaveTextContent('支付宝')
    expect(within(row).getByTestId('gateway-currency')).toHaveTextContent('CNY')
    expect(within(row).queryByTestId('gateway-webhook')).not.toBeInTheDocument()
  })

  it('edits an Alipay gateway with the private key left blank (sent as ""); the switch keeps it too', async () => {
    resetPaymentMocks([mockAlipayGateway()])
    signIn()
    const writes = recordWrites()
    const { user } = openScreen('/panel/payment')

    const row = await screen.findByTestId('gateway-row-4')
    expect(row).toHaveTextContent('支付宝')
    await user.click(within(row).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    const field = (label: string) => within(dialog).getByLabelText(label)
    expect(field('类型')).toHaveValue('alipay')
    expect(field('收款币种')).toHaveValue('CNY')
    expect(field('收款币种')).toBeDisabled()
    expect(field('应用 APPID')).toHaveValue('2021000123456789')
    expect(field('支付产品')).toHaveValue('page')
    // Alipay's public key is not a secret: it is listed and shown.
    expect(field('支付宝公钥')).toHaveValue(MOCK_ALIPAY_PUBLIC_KEY)
    expect(field('应用私钥')).toHaveValue('')
    expect(field('应用私钥')).toHaveAttribute('placeholder', '留空则保留原密钥')
    expect(within(dialog).getByTestId('gateway-alipay-private-key-hint')).toHaveTextContent('已保存密钥；留空则保留原密钥，填写则替换。')

    await user.selectOptions(field('支付产品'), 'qrcode')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    const saved = {
      id: 4,
      name: '支付宝官方',
      type: 'alipay',
      icon: 'https://pay.example.com/alipay.png',
      enable: true,
      fixed_fee: 0,
      percent_fee: 0.006,
      currency: 'CNY',
      notify_domain: '',
      sort: 0,
      config: { app_id: '2021000123456789', mode: 'qrcode', alipay_public_key: MOCK_ALIPAY_PUBLIC_KEY, private_key: '' },
    }
    await waitFor(() => expect(writes).toEqual([{ method: 'PUT', body: saved }]))
    expect(await screen.findByText('支付方式已保存！')).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByTestId('gateway-form-dialog')).not.toBeInTheDocument())

    // Still saved: the next edit says so.
    await user.click(within(screen.getByTestId('gateway-row-4')).getByTestId('gateway-edit'))
    const again = await screen.findByTestId('gateway-form-dialog')
    expect(within(again).getByLabelText('支付产品')).toHaveValue('qrcode')
    expect(within(again).getByTestId('gateway-alipay-private-key-hint')).toHaveTextContent('已保存密钥')
    await user.click(within(again).getByRole('button', { name: '取消' }))
    await waitFor(() => expect(screen.queryByTestId('gateway-form-dialog')).not.toBeInTheDocument())

    // The switch sends Alipay's config shape, the private key kept.
    await user.click(within(screen.getByTestId('gateway-row-4')).getByTestId('gateway-toggle'))
    await waitFor(() => expect(writes).toHaveLength(2))
    expect(writes[1]).toEqual({ method: 'PUT', body: { ...saved, enable: false } })
    expect(await screen.findByText('支付方式已停用！')).toBeInTheDocument()
  })

  it('checks a WeChat Pay gateway like the server: digits for the merchant number, a 32-character APIv3 key; then sends it', async () => {
    resetPaymentMocks([])
    signIn()
    const writes = recordWrites()
    const { user, dialog } = await openDialog('/panel/payment', 'gateway-create', 'gateway-form-dialog')
    const field = (label: string) => within(dialog).getByLabelText(label)

    await user.selectOptions(field('类型'), 'wxpay')
    expect(field('收款币种')).toHaveValue('CNY')
    expect(field('收款币种')).toBeDisabled()
    expect(within(dialog).getByTestId('gateway-currency-hint')).toHaveTextContent('微信支付仅支持人民币（CNY）收款。')
    expect(within(dialog).getByTestId('gateway-wxpay-fields')).toHaveTextContent('微信支付接口')
    expect(within(dialog).getByTestId('gateway-notify-auto')).toHaveTextContent('告诉微信支付，无需在其后台登记')
    expect(within(dialog).getByTestId('gateway-wxpay-https')).toHaveTextContent('微信支付只向 https:// 地址发送通知')
    expect(field('APIv3 密钥')).toHaveAttribute('type', 'password')
    expect(field('商户 API 私钥').tagName).toBe('TEXTAREA')
    expect(field('微信支付公钥').tagName).toBe('TEXTAREA')

    await user.type(field('名称'), '微信支付')
    await user.type(field('图标'), 'https://pay.example.com/wxpay.png')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    for (const message of [
      '请输入商户号',
      '请输入 AppID',
      '请输入商户 API 证书序列号',
      '请输入微信支付公钥 ID',
      '请输入微信支付公钥',
      '请输入商户 API 私钥',
      '请输入 APIv3 密钥',
    ]) {
      expect(await within(dialog).findByText(message)).toBeInTheDocument()
    }

    await user.type(field('商户号'), '19000-0109')
    await user.type(field('关联 AppID'), 'wx8888888888888888')
    await user.type(field('商户 API 证书序列号'), 'not-hex')
    await user.type(field('微信支付公钥 ID'), 'PUB_KEY_ID_0114232134912410000000000000')
    await user.click(field('微信支付公钥'))
    await user.paste(MOCK_WXPAY_PUBLIC_KEY)
    await user.click(field('商户 API 私钥'))
    await user.paste(PRIVATE_KEY_PEM)
    await user.type(field('APIv3 密钥'), 'too-short')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('商户号须为数字')).toBeInTheDocument()
    expect(within(dialog).getByText('证书序列号须为十六进制字符（0–9、A–F）')).toBeInTheDocument()
    expect(within(dialog).getByText('APIv3 密钥须为 32 个字符')).toBeInTheDocument()
    // 33 characters is not 32 either.
    await user.clear(field('APIv3 密钥'))
    await user.type(field('APIv3 密钥'), 'a'.repeat(33))
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('APIv3 密钥须为 32 个字符')).toBeInTheDocument()
    expect(writes).toEqual([])

    await user.clear(field('商户号'))
    await user.type(field('商户号'), '1900000109')
    await user.clear(field('商户 API 证书序列号'))
    await user.type(field('商户 API 证书序列号'), '5157F09EFDC096DE15EBE81A47057A7232F1B8E1')
    await user.clear(field('APIv3 密钥'))
    await user.type(field('APIv3 密钥'), 'abcdefghijklmnopqrstuvwxyz012345')
    await user.type(field('回调地址'), 'https://cb.example.com')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))

    await waitFor(() =>
      expect(writes).toEqual([
        {
          method: 'POST',
          body: {
            name: '微信支付',
            type: 'wxpay',
            icon: 'https://pay.example.com/wxpay.png',
            enable: true,
            fixed_fee: 0,
            percent_fee: 0,
            currency: 'CNY',
            notify_domain: 'https://cb.example.com',
            sort: 0,
            config: {
              mch_id: '1900000109',
              app_id: 'wx8888888888888888',
              serial_no: '5157F09EFDC096DE15EBE81A47057A7232F1B8E1',
              platform_key_id: 'PUB_KEY_ID_0114232134912410000000000000',
              platform_public_key: MOCK_WXPAY_PUBLIC_KEY,
              private_key: PRIVATE_KEY_PEM,
              api_v3_key: 'abcdefghijklmnopqrstuvwxyz012345',
            },
          },
        },
      ]),
    )
    expect(await screen.findByText('支付方式已添加！')).toBeInTheDocument()
    expect(await screen.findByTestId('gateway-row-1')).toHaveTextContent('微信支付')
  })

  it('edits a WeChat Pay gateway with both secrets left blank (sent as "")', async () => {
    resetPaymentMocks([mockWxpayGateway({ secrets_set: { private_key: true, api_v3_key: false } })])
    signIn()
    const writes = recordWrites()
    const { user } = openScreen('/panel/payment')
    await user.click(within(await screen.findByTestId('gateway-row-5')).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    const field = (label: string) => within(dialog).getByLabelText(label)
    expect(field('商户号')).toHaveValue('1900000109')
    expect(field('微信支付公钥')).toHaveValue(MOCK_WXPAY_PUBLIC_KEY)
    expect(field('收款币种')).toBeDisabled()
    expect(within(dialog).getByTestId('gateway-wxpay-private-key-hint')).toHaveTextContent('已保存密钥')
    expect(within(dialog).getByTestId('gateway-api-v3-key-hint')).toHaveTextContent('尚未保存密钥，请填写。')
    for (const label of ['商户 API 私钥', 'APIv3 密钥']) {
      expect(field(label)).toHaveValue('')
      expect(field(label)).toHaveAttribute('placeholder', '留空则保留原密钥')
    }
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    await waitFor(() => expect(writes).toHaveLength(1))
    expect(writes[0]).toEqual({
      method: 'PUT',
      body: {
        id: 5,
        name: '微信支付官方',
        type: 'wxpay',
        icon: 'https://pay.example.com/wxpay.png',
        enable: true,
        fixed_fee: 0,
        percent_fee: 0.006,
        currency: 'CNY',
        notify_domain: 'https://cb.example.com',
        sort: 0,
        config: { ...mockWxpayGateway().config, private_key: '', api_v3_key: '' },
      },
    })
    expect(await screen.findByText('支付方式已保存！')).toBeInTheDocument()
  })

  it('the orders tab lists orders and filters them by trade number, user and status', async () => {
    resetPaymentMocks(
      [mockGateway()],
      [
        mockOrder({ id: 1, trade_no: 'SB001', user_id: 2, username: 'alice', status: 'paid', paid_at: 1_735_690_000, gateway_no: 'EP123' }),
        mockOrder({ id: 2, trade_no: 'SB002', user_id: 3, username: 'bob', status: 'pending', discount: 1 }),
        mockOrder({ id: 3, trade_no: 'SB003', user_id: 2, username: 'alice', status: 'expired' }),
      ],
    )
    signIn()
    const queries: Record<string, string>[] = []
    server.events.on('request:start', ({ request }) => {
      const url = new URL(request.url)
      if (url.pathname === '/api/payment/order') queries.push(Object.fromEntries(url.searchParams))
    })
    const { user } = openScreen('/panel/payment')
    await user.click(await screen.findByTestId('payment-tab-orders'))
    const table = await screen.findByTestId('orders-table')
    expect(within(table).getAllByTestId(/^order-row-/).map((r) => r.dataset.testid)).toEqual(['order-row-3', 'order-row-2', 'order-row-1'])
    const paid = within(table).getByTestId('order-row-1')
    expect(within(paid).getByTestId('order-status')).toHaveTextContent('已支付')
    expect(within(paid).getByTestId('order-paid-amount')).toHaveTextContent('¥69.35')
    expect(within(paid).getByTestId('order-paid-amount')).toHaveTextContent('含手续费 ¥3.65')
    expect(paid).toHaveTextContent('优惠 10%')
    expect(paid).toHaveTextContent('EP123')
    expect(within(table).getByTestId('order-row-2')).toHaveTextContent('未支付')
    expect(within(table).getByTestId('order-row-2')).not.toHaveTextContent('优惠')
    expect(queries[0]).toEqual({ page: '1', size: '10' })

    await user.type(screen.getByTestId('order-user-id'), 'x')
    expect(screen.getByText('用户 ID 须为数字')).toBeInTheDocument()
    await user.clear(screen.getByTestId('order-user-id'))
    await user.type(screen.getByTestId('order-user-id'), '2{Enter}')
    await waitFor(() => expect(queries.at(-1)).toEqual({ page: '1', size: '10', user_id: '2' }))
    await waitFor(() => expect(within(screen.getByTestId('orders-table')).queryByTestId('order-row-2')).not.toBeInTheDocument())

    await user.selectOptions(screen.getByTestId('order-status-filter'), 'expired')
    await waitFor(() => expect(queries.at(-1)).toEqual({ page: '1', size: '10', user_id: '2', status: 'expired' }))
    await waitFor(() => expect(within(screen.getByTestId('orders-table')).getAllByTestId(/^order-row-/)).toHaveLength(1))

    await user.type(screen.getByTestId('order-trade-no'), 'SB001{Enter}')
    await waitFor(() =>
      expect(queries.at(-1)).toEqual({ page: '1', size: '10', user_id: '2', status: 'expired', trade_no: 'SB001' }),
    )
    expect(await screen.findByTestId('orders-empty')).toHaveTextContent('没有符合条件的订单')
  })

  it('shows an order paid late as such, and filters by it', async () => {
    resetPaymentMocks([mockGateway()], [mockOrder({ id: 4, trade_no: 'SB004', status: 'paid_late', paid_at: 1_735_690_000, gateway_no: 'EP-LATE' })])
    signIn()
    const { user } = openScreen('/panel/payment')
    await user.click(await screen.findByTestId('payment-tab-orders'))
    const row = await screen.findByTestId('order-row-4')
    expect(within(row).getByTestId('order-status')).toHaveTextContent('逾期已支付')
    expect(within(screen.getByTestId('order-status-filter')).getByRole('option', { name: '逾期已支付' })).toHaveValue('paid_late')
  })

  it("tells an administrator that moving a gateway's stored secrets needs them entered again; not root", async () => {
    resetPaymentMocks([mockGateway()])
    signIn(10)
    const first = renderApp('/panel/payment')
    const user = userEvent.setup()
    await user.click(within(await screen.findByTestId('gateway-row-1')).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    expect(within(dialog).getByTestId('gateway-form-destination-hint')).toHaveTextContent('请重新填写密钥')
    first.unmount()
    signIn()
    renderApp('/panel/payment')
    await user.click(within(await screen.findByTestId('gateway-row-1')).getByTestId('gateway-edit'))
    await screen.findByTestId('gateway-form-dialog')
    expect(screen.queryByTestId('gateway-form-destination-hint')).not.toBeInTheDocument()
  })

  it('refuses an http callback address for WeChat Pay, as the server does', async () => {
    resetPaymentMocks([mockWxpayGateway()])
    signIn()
    const writes = recordWrites()
    const { user } = openScreen('/panel/payment')
    await user.click(within(await screen.findByTestId('gateway-row-5')).getByTestId('gateway-edit'))
    const dialog = await screen.findByTestId('gateway-form-dialog')
    const domain = within(dialog).getByLabelText('回调地址')
    await user.clear(domain)
    await user.type(domain, 'http://cb.example.com')
    await user.click(within(dialog).getByTestId('gateway-form-submit'))
    expect(await within(dialog).findByText('微信支付需要 https 回调地址，例如 https://pay.example.com')).toBeInTheDocument()
    expect(writes).toHaveLength(0)
  })
})
