import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { ok, openDialog, openScreen, recordBodies, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { MOCK_OWNERS, mockPrice, resetPricingMocks } from '../mocks/handlers'
import { priceValue } from '../price-format'
import { isValidModelName } from '../schemas'

// These flows type a lot; give them room on a busy machine.
configure({ asyncUtilTimeout: 4_000 })
vi.setConfig({ testTimeout: 30_000 })

const plainUser = { ...mockRoot, id: 2, username: 'alice', role: 1 }

const signIn = (user = mockRoot) => signInAs(user)

beforeEach(() => {
  resetPricingMocks()
  server.use(http.get('*/api/model_ownedby', () => ok(MOCK_OWNERS)))
})

describe('price rules', () => {
  it('formats ratios as money and checks the wildcard', () => {
    expect(priceValue(0, 'usd')).toBeNull()
    expect(priceValue(1, 'usd')).toBe('$0.002')
    expect(priceValue(1, 'usd', true)).toBe('$2')
    expect(priceValue(0.075, 'cny', true)).toBe('¥1.05')
    expect(isValidModelName('gpt-4o*')).toBe(true)
    expect(isValidModelName('*')).toBe(false)
    expect(isValidModelName('gpt*4o')).toBe(false)
  })
})

describe('available models screen', () => {
  it('lists the models with prices, the unpriced ones marked; filters by keyword', async () => {
    server.use(
      http.get('*/api/available_model', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: [
            { model: 'gpt-4o-mini', price: { ...mockPrice(), extra: {} }, group_ratio: 1 },
            { model: 'dall-e-3', price: { ...mockPrice({ model: 'dall-e-3', type: 'times', input: 20, output: 0 }), extra: {} }, group_ratio: 1 },
            { model: 'free-model', price: { ...mockPrice({ model: 'free-model', input: 0, output: 0, channel_type: 14 }), extra: {} }, group_ratio: 1 },
            { model: 'new-model', price: null, group_ratio: 1 },
          ],
        }),
      ),
    )
    signIn(plainUser)
    renderApp('/panel/model_price')
    const table = await screen.findByTestId('available-table')
    const mini = within(table).getByTestId('available-row-gpt-4o-mini')
    expect(mini).toHaveTextContent('$0.00015')
    expect(mini).toHaveTextContent('$0.0006')
    await waitFor(() => expect(mini).toHaveTextContent('OpenAI'))
    expect(within(table).getByTestId('available-row-dall-e-3')).toHaveTextContent('$0.04')
    expect(within(table).getByTestId('available-row-dall-e-3')).toHaveTextContent('按次计费')
    expect(within(table).getByTestId('available-row-free-model')).toHaveTextContent('免费')
    expect(within(table).getByTestId('available-row-new-model')).toHaveTextContent('未定价')

    const user = userEvent.setup()
    await user.selectOptions(screen.getByTestId('price-unit'), '1m')
    expect(within(mini).getByText(/\$0\.15/)).toBeInTheDocument()
    await user.type(screen.getByTestId('price-search'), 'dall')
    expect(within(screen.getByTestId('available-table')).getAllByRole('row')).toHaveLength(2)
    await user.clear(screen.getByTestId('price-search'))
    await user.type(screen.getByTestId('price-search'), 'zzz')
    expect(await screen.findByTestId('available-empty')).toHaveTextContent('没有符合条件的模型')
  })

  it('shows the empty state', async () => {
    signIn(plainUser)
    renderApp('/panel/model_price')
    expect(await screen.findByTestId('available-empty')).toHaveTextContent('您的分组暂时没有可用模型')
  })
})

describe('public price page', () => {
  it('lists the prices without signing in', async () => {
    resetPricingMocks([mockPrice(), mockPrice({ model: 'claude-3-5-haiku', channel_type: 14, input: 0.4, output: 2 })])
    renderApp('/price')
    const table = await screen.findByTestId('public-price-table')
    expect(within(table).getByTestId('public-price-row-claude-3-5-haiku')).toHaveTextContent('$0.0008')
    await waitFor(() => expect(within(table).getByTestId('public-price-row-claude-3-5-haiku')).toHaveTextContent('Anthropic'))
  })

  it('shows the empty state', async () => {
    renderApp('/price')
    expect(await screen.findByTestId('public-price-empty')).toHaveTextContent('暂无价格信息')
  })
})

describe('pricing editor', () => {
  it('shows warnings and the rows; creating validates then posts the price', async () => {
    server.use(
      http.get('*/api/prices/warnings', () =>
        ok({ unpriced_models: ['gpt-5'], unknown_owner: ['odd-model'] }),
      ),
    )
    const body = recordBodies('post', '*/api/prices', mockPrice(), 201)
    resetPricingMocks([mockPrice({ locked: true })])
    signIn()
    renderApp('/panel/pricing')
    const warnings = await screen.findByTestId('price-warnings')
    expect(warnings).toHaveTextContent('gpt-5')
    expect(warnings).toHaveTextContent('odd-model')
    expect(await screen.findByTestId('price-row-gpt-4o-mini')).toHaveTextContent('0.075')
    expect(screen.getByLabelText('已锁定：不会被自动更新覆盖')).toBeInTheDocument()

    const user = userEvent.setup()
    await user.click(screen.getByTestId('price-create'))
    const dialog = await screen.findByTestId('price-form-dialog')
    await user.type(within(dialog).getByLabelText('模型名称'), 'gpt*x')
    await user.click(within(dialog).getByTestId('price-form-submit'))
    expect(await within(dialog).findByText('通配符 * 只能放在末尾，且前面至少有一个字符')).toBeInTheDocument()
    expect(within(dialog).getByText('供应商类型不能为空')).toBeInTheDocument()
    expect(within(dialog).getAllByText('请输入不小于 0 的数字')).toHaveLength(2)
    expect(body.at(-1)).toBeUndefined()

    await user.clear(within(dialog).getByLabelText('模型名称'))
    await user.type(within(dialog).getByLabelText('模型名称'), 'dall-e-*')
    await user.selectOptions(within(dialog).getByLabelText('供应商类型'), '1')
    await user.selectOptions(within(dialog).getByLabelText('计费类型'), 'times')
    await user.type(within(dialog).getByLabelText('每次倍率'), '20')
    expect(within(dialog).getByText('约 $0.04 / 次')).toBeInTheDocument()
    await user.click(within(dialog).getByRole('switch', { name: '锁定价格' }))
    await user.click(within(dialog).getByTestId('price-form-submit'))
    await waitFor(() =>
      expect(body.at(-1)).toEqual({
        model: 'dall-e-*',
        type: 'times',
        channel_type: 1,
        input: 20,
        output: 0,
        extra_ratios: {
          cached_tokens: 1,
          cached_write_tokens: 1.25,
          cached_read_tokens: 0.1,
          input_audio_tokens: 1,
          output_audio_tokens: 1,
          reasoning_tokens: 1,
          input_text_tokens: 1,
          output_text_tokens: 1,
          input_image_tokens: 1,
          output_image_tokens: 1,
        },
        locked: true,
        max_output_tokens: 0,
      }),
    )
    await waitFor(() => expect(screen.queryByTestId('price-form-dialog')).not.toBeInTheDocument())
  })

  it('edits a row with PUT {model, price}, deletes selected rows, and batch-saves JSON', async () => {
    resetPricingMocks([mockPrice(), mockPrice({ model: 'gpt-4o', input: 1.25, output: 5, max_output_tokens: 16384 })])
    const puts: unknown[] = []
    const deletes: unknown[] = []
    const batches: unknown[] = []
    server.use(
      http.put('*/api/prices', async ({ request }) => {
        puts.push(await request.json())
        return ok(mockPrice())
      }),
      http.post('*/api/prices/delete', async ({ request }) => {
        deletes.push(await request.json())
        return ok({ deleted: 2 })
      }),
      http.post('*/api/prices/batch', async ({ request }) => {
        batches.push(await request.json())
        return ok({ count: 1 })
      }),
    )
    signIn()
    const { user } = openScreen('/panel/pricing')
    const row = await screen.findByTestId('price-row-gpt-4o')
    await user.click(within(row).getByTestId('price-edit'))
    const dialog = await screen.findByTestId('price-form-dialog')
    expect(within(dialog).getByLabelText('输入倍率')).toHaveValue(1.25)
    expect(within(dialog).getByLabelText('输出上限（token）')).toHaveValue(16384)
    await user.clear(within(dialog).getByLabelText('输出倍率'))
    await user.type(within(dialog).getByLabelText('输出倍率'), '4')
    await user.click(within(dialog).getByTestId('price-form-submit'))
    await waitFor(() => expect(puts).toHaveLength(1))
    expect(puts[0]).toMatchObject({
      model: 'gpt-4o',
      price: { model: 'gpt-4o', input: 1.25, output: 4, type: 'tokens', max_output_tokens: 16384 },
    })

    await user.click(screen.getByLabelText('全选'))
    await user.click(screen.getByTestId('price-delete-selected'))
    await user.click(await screen.findByTestId('price-delete-dialog-confirm'))
    await waitFor(() => expect(deletes).toEqual([{ models: expect.arrayContaining(['gpt-4o', 'gpt-4o-mini']) }]))

    await user.click(screen.getByTestId('price-batch'))
    const batch = await screen.findByTestId('price-batch-dialog')
    const box = within(batch).getByTestId('price-batch-json')
    await user.clear(box)
    await user.click(box)
    await user.paste('{"a": 1}')
    await user.click(within(batch).getByTestId('price-batch-submit'))
    expect(await within(batch).findByTestId('price-batch-error')).toHaveTextContent('价格数据格式不正确')
    await user.clear(box)
    await user.click(box)
    await user.paste('[{"model":"m1","type":"tokens","channel_type":1,"input":1,"output":2}]')
    await user.click(within(batch).getByTestId('price-batch-submit'))
    await waitFor(() =>
      expect(batches).toEqual([{ prices: [{ model: 'm1', type: 'tokens', channel_type: 1, input: 1, output: 2 }] }]),
    )
  })

  it('edits the text and image ratios: loads them, refuses a negative one, submits all ten', async () => {
    resetPricingMocks([
      mockPrice({ model: 'gpt-image-1', input: 2.5, output: 20, extra_ratios: { input_image_tokens: 4, output_text_tokens: 0.5 } }),
    ])
    const puts: { model: string; price: { extra_ratios: Record<string, number> } }[] = []
    server.use(
      http.put('*/api/prices', async ({ request }) => {
        puts.push((await request.json()) as (typeof puts)[number])
        return ok(mockPrice())
      }),
    )
    signIn()
    const { user } = openScreen('/panel/pricing')
    const row = await screen.findByTestId('price-row-gpt-image-1')
    await user.click(within(row).getByTestId('price-edit'))
    const dialog = await screen.findByTestId('price-form-dialog')
    expect(within(dialog).getByLabelText('输入文本')).toHaveValue(1)
    expect(within(dialog).getByLabelText('输出文本')).toHaveValue(0.5)
    expect(within(dialog).getByLabelText('输入图片')).toHaveValue(4)
    expect(within(dialog).getByLabelText('输出图片')).toHaveValue(1)

    await user.clear(within(dialog).getByLabelText('输出图片'))
    await user.type(within(dialog).getByLabelText('输出图片'), '-1')
    await user.click(within(dialog).getByTestId('price-form-submit'))
    expect(await within(dialog).findByText('请输入不小于 0 的数字')).toBeInTheDocument()
    expect(puts).toHaveLength(0)

    await user.clear(within(dialog).getByLabelText('输出图片'))
    await user.type(within(dialog).getByLabelText('输出图片'), '8')
    await user.clear(within(dialog).getByLabelText('输入文本'))
    await user.type(within(dialog).getByLabelText('输入文本'), '0')
    await user.click(within(dialog).getByTestId('price-form-submit'))
    await waitFor(() => expect(puts).toHaveLength(1))
    expect(puts[0]?.price.extra_ratios).toEqual({
      cached_tokens: 1,
      cached_write_tokens: 1.25,
      cached_read_tokens: 0.1,
      input_audio_tokens: 1,
      output_audio_tokens: 1,
      reasoning_tokens: 1,
      input_text_tokens: 0,
      output_text_tokens: 0.5,
      input_image_tokens: 4,
      output_image_tokens: 8,
    })
  })

  it('syncs from a price server: preview with dry_run, then apply', async () => {
    const bodies: unknown[] = []
    server.use(
      http.post('*/api/prices/sync', async ({ request }) => {
        const body = (await request.json()) as { dry_run: boolean }
        bodies.push(body)
        return HttpResponse.json({
          success: true,
          message: '',
          data: {
            inserted: 2, updated: 0, deleted: 0, unchanged: 5, locked: 1, skipped: 0, errors: [], dry_run: body.dry_run,
            ...(body.dry_run ? { insert_models: ['m-a', 'm-b'], update_models: [], delete_models: [] } : {}),
          },
        })
      }),
    )
    signIn()
    const { user, dialog } = await openDialog('/panel/pricing', 'price-sync', 'price-sync-dialog')
    expect(within(dialog).getByTestId('price-sync-apply')).toBeDisabled()
    await user.type(within(dialog).getByLabelText('价格服务器地址'), 'ftp://x')
    await user.click(within(dialog).getByTestId('price-sync-preview-button'))
    expect(await within(dialog).findByText('请输入 http(s) 开头的地址')).toBeInTheDocument()
    await user.clear(within(dialog).getByLabelText('价格服务器地址'))
    await user.type(within(dialog).getByLabelText('价格服务器地址'), 'https://prices.example.com/')
    await user.selectOptions(within(dialog).getByLabelText('更新方式'), 'overwrite')
    await user.click(within(dialog).getByTestId('price-sync-preview-button'))
    expect(await within(dialog).findByTestId('price-sync-preview')).toHaveTextContent('m-a, m-b')
    await user.click(within(dialog).getByTestId('price-sync-apply'))
    await waitFor(() =>
      expect(bodies).toEqual([
        { mode: 'overwrite', url: 'https://prices.example.com', dry_run: true },
        { mode: 'overwrite', url: 'https://prices.example.com', dry_run: false },
      ]),
    )
    expect(await screen.findByText('同步完成：新增 2，更新 0，删除 0')).toBeInTheDocument()
  })

  it('is empty without prices', async () => {
    signIn()
    renderApp('/panel/pricing')
    expect(await screen.findByTestId('pricing-empty')).toHaveTextContent('还没有价格')
  })
})
