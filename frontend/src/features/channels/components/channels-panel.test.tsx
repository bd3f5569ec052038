import { configure, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { ok, openDialog, openScreen, recordBodies, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { channelHandlers, mockChannel, resetChannelMocks, setChannelHealthMock } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const signIn = () => signInAs(mockRoot, channelHandlers)

const fast = mockChannel({ id: 1, name: 'openai-main', response_time: 420, test_time: 1_735_689_600, used_quota: 1_000_000 })
const claude = mockChannel({
  id: 2,
  type: 14,
  name: 'claude',
  models: 'claude-*',
  group: 'default,vip',
  tag: 'team-a',
  status: 3,
  test_model: '',
  balance: 12_500_000,
  balance_updated_at: 1_735_689_600,
})
const azure = mockChannel({ id: 3, type: 3, name: 'azure', status: 2, tag: 'team-a', base_url: 'https://x.openai.azure.com' })

describe('channels screen', { timeout: 20_000 }, () => {
  it('a list that cannot be read says why in the reader\'s language and retries, never "no channels"', async () => {
    resetChannelMocks([fast])
    signIn()
    let fail = true
    // Until told otherwise the list is refused; then the default handler answers (undefined
    // falls through to it).
    server.use(
      http.get('*/api/channel', () =>
        fail ? HttpResponse.json({ success: false, message: 'page 99999 is too deep', code: 'page_too_deep' }, { status: 400 }) : undefined,
      ),
    )
    renderApp('/panel/channel')
    const failed = await screen.findByTestId('channels-empty-error')
    expect(failed).toHaveTextContent('翻页太深，请缩小筛选范围。')
    expect(screen.queryByTestId('channels-empty')).not.toBeInTheDocument()
    fail = false
    await userEvent.setup().click(within(failed).getByTestId('channels-empty-retry'))
    expect(await screen.findByTestId(`channel-row-${fast.id}`)).toBeInTheDocument()
  })

  it('marks a channel whose circuit breaker holds it out, naming the models', async () => {
    resetChannelMocks([fast, claude, azure])
    signIn()
    setChannelHealthMock({
      circuit_breaker_enabled: true,
      latency_aware_routing: false,
      pairs: [
        { channel_id: 1, model: 'gpt-4o', state: 'open', opened_at: 1_735_689_600, error_ratio: 1, requests: 12, failures: 12, latency_ms: 1000, in_flight: 0 },
        { channel_id: 1, model: 'gpt-4o-mini', state: 'half_open', opened_at: 1_735_689_500, error_ratio: 0.6, requests: 10, failures: 6, latency_ms: 900, in_flight: 1 },
        { channel_id: 2, model: 'claude-3', state: 'half_open', opened_at: 1_735_689_600, error_ratio: 0.5, requests: 10, failures: 5, latency_ms: 300, in_flight: 0 },
        { channel_id: 3, model: 'gpt-4o', state: 'closed', opened_at: null, error_ratio: 0, requests: 3, failures: 0, latency_ms: 120.5, in_flight: 0 },
      ],
    })
    renderApp('/panel/channel')
    const table = await screen.findByTestId('channels-table')
    const one = within(table).getByTestId('channel-row-1')
    const mark = await within(one).findByTestId('channel-breaker')
    expect(mark).toHaveTextContent('已熔断')
    expect(mark).toHaveAttribute('title', '暂停用于：gpt-4o, gpt-4o-mini')
    expect(within(within(table).getByTestId('channel-row-2')).getByTestId('channel-breaker')).toHaveTextContent('探测中')
    expect(within(within(table).getByTestId('channel-row-3')).queryByTestId('channel-breaker')).not.toBeInTheDocument()
  })

  it('lists channels with type, status, groups, response time and balance; filters through the query', async () => {
    resetChannelMocks([fast, claude, azure])
    signIn()
    const queries: Record<string, string>[] = []
    server.events.on('request:start', ({ request }) => {
      const url = new URL(request.url)
      if (url.pathname === '/api/channel') queries.push(Object.fromEntries(url.searchParams))
    })
    renderApp('/panel/channel')
    const table = await screen.findByTestId('channels-table')
    expect(within(table).getAllByTestId('channel-name').map((n) => n.textContent)).toEqual(['azure', 'claude', 'openai-main'])
    const one = within(table).getByTestId('channel-row-1')
    expect(one).toHaveTextContent('OpenAI')
    expect(within(one).getByTestId('channel-status')).toHaveTextContent('已启用')
    expect(within(one).getByTestId('channel-response')).toHaveTextContent('420 ms')
    await waitFor(() => expect(within(one).getByTestId('channel-used')).toHaveTextContent('$2.00'))
    expect(within(one).getByTestId('channel-balance')).toHaveTextContent('未知')
    const two = within(table).getByTestId('channel-row-2')
    expect(two).toHaveTextContent('Anthropic')
    expect(two).toHaveTextContent('#team-a')
    expect(two).toHaveTextContent('vip')
    expect(within(two).getByTestId('channel-status')).toHaveTextContent('测速禁用')
    expect(within(two).getByTestId('channel-response')).toHaveTextContent('未测试')
    expect(within(two).getByTestId('channel-balance')).toHaveTextContent('$12.50')
    expect(within(table).getByTestId('channel-row-3')).toHaveTextContent('已禁用')

    const user = userEvent.setup()
    await user.selectOptions(screen.getByTestId('channel-filter-type'), '14')
    await user.selectOptions(screen.getByTestId('channel-filter-status'), '3')
    await user.type(screen.getByTestId('channel-filter-group'), 'vip')
    await user.type(screen.getByTestId('channel-filter-tag'), 'team-a')
    await user.type(screen.getByTestId('channel-filter-model'), 'claude-*')
    await user.type(screen.getByTestId('channel-filter-keyword'), 'cla')
    await user.selectOptions(screen.getByTestId('channel-filter-order'), '-priority')
    await user.click(screen.getByTestId('channel-search'))
    await waitFor(() =>
      expect(queries.at(-1)).toEqual({
        page: '1',
        size: '10',
        keyword: 'cla',
        type: '14',
        status: '3',
        group: 'vip',
        tag: 'team-a',
        model: 'claude-*',
        order: '-priority',
      }),
    )
    await waitFor(() =>
      expect(within(screen.getByTestId('channels-table')).getAllByTestId('channel-name').map((n) => n.textContent)).toEqual([
        'claude',
      ]),
    )
    server.events.removeAllListeners()
  })

  it('shows the empty state', async () => {
    resetChannelMocks([])
    signIn()
    renderApp('/panel/channel')
    expect(await screen.findByTestId('channels-empty')).toHaveTextContent('暂无渠道')
  })

  it('validates the form as in spec section 5', async () => {
    resetChannelMocks([])
    signIn()
    let posted = false
    server.use(
      http.post('*/api/channel', () => {
        posted = true
        return ok({ ids: [1], count: 1 })
      }),
    )
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '8')
    await user.clear(within(dialog).getByLabelText('分组'))
    await user.type(within(dialog).getByLabelText('模型'), 'gpt-4o,*')
    await user.type(within(dialog).getByLabelText('模型映射'), '{{not json')
    await user.clear(within(dialog).getByLabelText('优先级'))
    await user.type(within(dialog).getByLabelText('优先级'), '-1')
    await user.clear(within(dialog).getByLabelText('权重'))
    await user.type(within(dialog).getByLabelText('权重'), '0')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('名称不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText('密钥不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText('Base URL不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText('分组不能为空')).toBeInTheDocument()
    expect(within(dialog).getByText(/模型“\*”无效/)).toBeInTheDocument()
    expect(within(dialog).getByText('请输入有效的 JSON 对象')).toBeInTheDocument()
    expect(within(dialog).getByText('优先级必须是不小于 0 的整数')).toBeInTheDocument()
    expect(within(dialog).getByText('权重必须是不小于 1 的整数')).toBeInTheDocument()
    expect(posted).toBe(false)
  })

  it('creates one channel per key line with every field', async () => {
    resetChannelMocks([])
    signIn()
    const posted = recordBodies('post', '*/api/channel', { ids: [1, 2], count: 2 }, 201)
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'deepseek')
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '28')
    await user.type(within(dialog).getByLabelText('密钥'), 'sk-one{Enter}{Enter} sk-two ')
    expect(within(dialog).getByText('将创建 2 个渠道，每行一个密钥。')).toBeInTheDocument()
    await user.type(within(dialog).getByLabelText('Base URL'), 'https://api.deepseek.com/')
    await user.type(within(dialog).getByLabelText('模型'), 'deepseek-chat, deepseek-reasoner,deepseek-chat')
    await user.type(within(dialog).getByLabelText('分组'), ',vip')
    await user.type(within(dialog).getByLabelText('测试模型'), 'deepseek-chat')
    await user.clear(within(dialog).getByLabelText('优先级'))
    await user.type(within(dialog).getByLabelText('优先级'), '5')
    await user.clear(within(dialog).getByLabelText('权重'))
    await user.type(within(dialog).getByLabelText('权重'), '3')
    await user.type(within(dialog).getByLabelText('标签'), 'cn')
    await user.type(within(dialog).getByLabelText('代理'), 'socks5://127.0.0.1:1080')
    await user.type(within(dialog).getByLabelText('模型映射'), '{{"gpt-4":"deepseek-chat"}')
    await user.type(within(dialog).getByLabelText('自定义请求头'), '{{"X-Org":"acme"}')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() =>
      expect(posted.at(-1)).toEqual({
        name: 'deepseek',
        type: 28,
        key: 'sk-one\nsk-two',
        base_url: 'https://api.deepseek.com',
        models: 'deepseek-chat,deepseek-reasoner',
        group: 'default,vip',
        model_mapping: '{"gpt-4":"deepseek-chat"}',
        priority: 5,
        weight: 3,
        custom_headers: '{"X-Org":"acme"}',
        test_model: 'deepseek-chat',
        proxy: 'socks5://127.0.0.1:1080',
        tag: 'cn',
      }),
    )
    expect(await screen.findByText('已创建 2 个渠道！')).toBeInTheDocument()
  })

  it('edits without resending the key and merges fetched models', async () => {
    resetChannelMocks([fast])
    signIn()
    let put: Record<string, unknown> | undefined
    server.use(
      http.put('*/api/channel', async ({ request }) => {
        put = (await request.json()) as Record<string, unknown>
        return ok(fast)
      }),
    )
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-1')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    expect(within(dialog).getByLabelText('名称')).toHaveValue('openai-main')
    // Root may move a stored key: no hint about re-entering it.
    expect(within(dialog).queryByTestId('channel-form-destination-hint')).toBeNull()
    expect(within(dialog).getByLabelText('模型')).toHaveValue('gpt-4o-mini,gpt-4o')
    await user.click(within(dialog).getByTestId('channel-fetch-models'))
    await waitFor(() => expect(within(dialog).getByLabelText('模型')).toHaveValue('gpt-4o-mini,gpt-4o,gpt-4.1,o3-mini'))
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(put).toMatchObject({ id: 1, name: 'openai-main', models: 'gpt-4o-mini,gpt-4o,gpt-4.1,o3-mini' }))
    expect(put).not.toHaveProperty('key')
    expect(await screen.findByText('渠道已更新！')).toBeInTheDocument()
  })

  it('removes a prefix from fetched models and maps the short names to the upstream ids', async () => {
    resetChannelMocks([{ ...fast, model_mapping: '{"gpt-4":"gpt-4o"}' }])
    signIn()
    server.use(http.get('*/api/channel/fetch_models/:id', () => ok(['openai/gpt-4.1', 'openai/o3-mini', 'mistral-large'])))
    let put: Record<string, unknown> | undefined
    server.use(
      http.put('*/api/channel', async ({ request }) => {
        put = (await request.json()) as Record<string, unknown>
        return ok(fast)
      }),
    )
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-1')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    expect(within(dialog).getByTestId('channel-affix-mode')).toHaveValue('prefix')
    await user.type(within(dialog).getByLabelText('前缀或后缀'), 'openai/')
    await user.click(within(dialog).getByTestId('channel-fetch-models'))
    await waitFor(() => expect(within(dialog).getByLabelText('模型')).toHaveValue('gpt-4o-mini,gpt-4o,gpt-4.1,o3-mini,mistral-large'))
    expect(JSON.parse((within(dialog).getByLabelText('模型映射') as HTMLTextAreaElement).value)).toEqual({
      'gpt-4': 'gpt-4o',
      'gpt-4.1': 'openai/gpt-4.1',
      'o3-mini': 'openai/o3-mini',
    })
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(put).toMatchObject({ models: 'gpt-4o-mini,gpt-4o,gpt-4.1,o3-mini,mistral-large' }))
    expect(JSON.parse(String(put?.model_mapping))).toEqual({ 'gpt-4': 'gpt-4o', 'gpt-4.1': 'openai/gpt-4.1', 'o3-mini': 'openai/o3-mini' })
  })

  it('tells an administrator that a new destination needs a new key, and translates the refusal', async () => {
    resetChannelMocks([fast])
    const admin = { ...mockRoot, id: 2, username: 'admin', role: 10 }
    resetAuthMocks(admin)
    setUser(admin)
    server.use(...channelHandlers)
    let put: Record<string, unknown> | undefined
    server.use(
      http.put('*/api/channel', async ({ request }) => {
        put = (await request.json()) as Record<string, unknown>
        return HttpResponse.json(
          {
            success: false,
            message: "only root may send a channel's stored key to a new destination (base_url); enter a new key to change it",
            code: 'destination_needs_root',
          },
          { status: 403 },
        )
      }),
    )
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-1')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    expect(within(dialog).getByTestId('channel-form-destination-hint')).toHaveTextContent('必须重新填写密钥')
    const baseUrl = within(dialog).getByLabelText('Base URL')
    await user.clear(baseUrl)
    await user.type(baseUrl, 'https://elsewhere.example.com')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(put).toMatchObject({ id: 1, base_url: 'https://elsewhere.example.com' }))
    expect(put).not.toHaveProperty('key')
    expect(
      await screen.findByText('错误：只有超级管理员可以把已保存的密钥发往新的目标地址。修改渠道的类型、Base URL、代理、自定义请求头或区域，或修改支付方式的地址、商户号或公钥时，请同时重新填写密钥。'),
    ).toBeInTheDocument()
    // The form stays open with what was typed.
    expect(screen.getByTestId('channel-form-dialog')).toBeInTheDocument()
  })

  it('edits the API version of an Azure channel inside its config', async () => {
    resetChannelMocks([{ ...azure, config: { api_version: '2024-10-21', region: 'eu' } }])
    signIn()
    let put: Record<string, unknown> | undefined
    server.use(
      http.put('*/api/channel', async ({ request }) => {
        put = (await request.json()) as Record<string, unknown>
        return ok(azure)
      }),
    )
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-3')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    const version = within(dialog).getByLabelText('API 版本')
    expect(version).toHaveValue('2024-10-21')
    await user.clear(version)
    await user.type(version, 'latest')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('API 版本格式应为 2024-10-21 或 2025-01-01-preview')).toBeInTheDocument()
    await user.clear(version)
    await user.type(version, '2025-01-01-preview')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(put?.config).toEqual({ api_version: '2025-01-01-preview', region: 'eu' }))
  })

  it('edits the relaying settings: chat only, models without streaming, voice mapping and other parameters', async () => {
    resetChannelMocks([{ ...fast, config: { custom_key: 'kept', voice_mapping: { nova: 'nova-2' } }, disabled_stream: ['o1'] }])
    signIn()
    let put: Record<string, unknown> | undefined
    server.use(
      http.put('*/api/channel', async ({ request }) => {
        put = (await request.json()) as Record<string, unknown>
        return ok(fast)
      }),
    )
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-1')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    const noStream = within(dialog).getByLabelText('禁用流式的模型')
    expect(noStream).toHaveValue('o1')
    expect(within(dialog).getByLabelText('nova')).toHaveValue('nova-2')
    await user.click(within(dialog).getByTestId('channel-form-only-chat'))
    await user.type(noStream, ', gpt 4')
    await user.type(within(dialog).getByLabelText('alloy'), 'zh-CN-XiaoxiaoNeural')
    await user.clear(within(dialog).getByLabelText('nova'))
    const params = within(dialog).getByLabelText('额外参数')
    await user.type(params, '{{"model":"x"}')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('不能设置这些键：model, stream, stream_options, max_tokens, max_completion_tokens, max_output_tokens, n')).toBeInTheDocument()
    expect(within(dialog).getByText(/模型“gpt 4”无效/)).toBeInTheDocument()
    expect(put).toBeUndefined()

    await user.clear(noStream)
    await user.type(noStream, 'o1, gpt-4*')
    await user.clear(params)
    await user.type(params, '{{"temperature":0.2,"user":null}')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() =>
      expect(put?.config).toEqual({
        custom_key: 'kept',
        only_chat: true,
        voice_mapping: { alloy: 'zh-CN-XiaoxiaoNeural' },
        custom_parameter: { temperature: 0.2, user: null },
      }),
    )
    expect(put?.disabled_stream).toEqual(['o1', 'gpt-4*'])
  })

  it('offers each setting only for the types that use it, and translates the refusal codes', async () => {
    resetChannelMocks([])
    signIn()
    server.use(
      http.post('*/api/channel', () =>
        HttpResponse.json(
          {
            success: false,
            message: "voice_mapping is not valid: 'robot' is not one of alloy, echo, fable, onyx, nova, shimmer",
            code: 'invalid_voice_mapping',
          },
          { status: 400 },
        ),
      ),
    )
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    const type = within(dialog).getByTestId('channel-form-type')
    // OpenAI: voices and other parameters; no region or API version.
    expect(within(dialog).getByTestId('channel-form-voices')).toBeInTheDocument()
    expect(within(dialog).getByLabelText('额外参数')).toBeInTheDocument()
    expect(within(dialog).queryByLabelText('区域')).toBeNull()
    expect(within(dialog).queryByLabelText('API 版本')).toBeNull()
    // Vertex AI: its region; its bodies are Gemini's or Anthropic's, so no voices or parameters.
    await user.selectOptions(type, '42')
    expect(within(dialog).getByLabelText('区域')).toHaveAttribute('placeholder', 'us-central1')
    expect(within(dialog).queryByTestId('channel-form-voices')).toBeNull()
    expect(within(dialog).queryByLabelText('额外参数')).toBeNull()
    await user.type(within(dialog).getByLabelText('区域'), 'eu/west')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('区域只能包含字母、数字和 -，例如 us-central1')).toBeInTheDocument()
    // Anthropic: chat only and models without streaming, nothing else.
    await user.selectOptions(type, '14')
    expect(within(dialog).queryByLabelText('区域')).toBeNull()
    expect(within(dialog).queryByTestId('channel-form-voices')).toBeNull()
    expect(within(dialog).getByTestId('channel-form-only-chat')).toBeInTheDocument()
    expect(within(dialog).getByLabelText('禁用流式的模型')).toBeInTheDocument()
    // Azure: the server's refusal code is shown in the user's language.
    await user.selectOptions(type, '3')
    await user.type(within(dialog).getByLabelText('名称'), 'az')
    await user.type(within(dialog).getByLabelText('密钥'), 'k')
    await user.type(within(dialog).getByLabelText('Base URL'), 'https://x.openai.azure.com')
    await user.type(within(dialog).getByLabelText('模型'), 'tts-1')
    await user.type(within(dialog).getByLabelText('alloy'), 'a-voice')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await screen.findByText(/^错误：声音映射无效/)).toBeInTheDocument()
  })

  it('Kling (53): says how to write its key, suggests its model names and offers no chat or OpenAI settings', async () => {
    resetChannelMocks([])
    signIn()
    let posted: Record<string, unknown> | undefined
    server.use(
      http.post('*/api/channel', async ({ request }) => {
        posted = (await request.json()) as Record<string, unknown>
        return ok({ ids: [1], count: 1 }, 201)
      }),
    )
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    const type = within(dialog).getByTestId('channel-form-type')
    // OpenAI: a plain key, chat-only offered.
    expect(within(dialog).queryByTestId('channel-form-key-format')).toBeNull()
    expect(within(dialog).getByTestId('channel-form-only-chat')).toBeInTheDocument()
    expect(within(type).getByRole('option', { name: 'Kling' })).toHaveValue('53')
    await user.selectOptions(type, '53')
    expect(within(dialog).getByTestId('channel-form-key-format')).toHaveTextContent(
      '可灵：填写可灵控制台的 Access Key 和 Secret Key，用竖线隔开：ACCESS_KEY|SECRET_KEY',
    )
    expect(within(dialog).getByLabelText('密钥')).toHaveAttribute('placeholder', 'ACCESS_KEY|SECRET_KEY')
    expect(within(dialog).getByLabelText('模型')).toHaveAttribute(
      'placeholder',
      'kling-video_kling-v1_std_5,kling-video_kling-v1_std_10,kling-video_kling-v1_pro_5,kling-video_kling-v1_pro_10',
    )
    expect(within(dialog).getByText('留空使用默认地址 https://api.klingai.com。')).toBeInTheDocument()
    // A task type: no chat-only, voices or other parameters.
    expect(within(dialog).queryByTestId('channel-form-only-chat')).toBeNull()
    expect(within(dialog).queryByTestId('channel-form-voices')).toBeNull()
    expect(within(dialog).queryByLabelText('额外参数')).toBeNull()
    await user.type(within(dialog).getByLabelText('名称'), 'kling')
    await user.type(within(dialog).getByLabelText('密钥'), 'ak-1|sk-1')
    await user.type(within(dialog).getByLabelText('模型'), 'kling-video_kling-v1_std_5,kling-video_kling-v1_pro')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(posted).toBeDefined())
    expect(posted).toMatchObject({
      name: 'kling',
      type: 53,
      key: 'ak-1|sk-1',
      base_url: '',
      models: 'kling-video_kling-v1_std_5,kling-video_kling-v1_pro',
    })
    expect(posted?.config).toBeUndefined()
    // Back to OpenAI: the Kling hint goes away.
    await user.click(await screen.findByTestId('channel-create'))
    const again = await screen.findByTestId('channel-form-dialog')
    await user.selectOptions(within(again).getByTestId('channel-form-type'), '53')
    expect(within(again).getByTestId('channel-form-key-format')).toBeInTheDocument()
    await user.selectOptions(within(again).getByTestId('channel-form-type'), '1')
    expect(within(again).queryByTestId('channel-form-key-format')).toBeNull()
  })

  it('tests a channel, updates the balance, toggles and deletes it', async () => {
    resetChannelMocks([fast, claude])
    signIn()
    const calls: string[] = []
    server.events.on('request:start', ({ request }) => {
      const url = new URL(request.url)
      // The breaker marks (GET /api/channel/health) refresh on their own.
      if (url.pathname.startsWith('/api/channel/') && url.pathname !== '/api/channel/health') calls.push(`${request.method} ${url.pathname}`)
    })
    const { user } = openScreen('/panel/channel')
    const one = await screen.findByTestId('channel-row-1')
    await user.click(within(one).getByTestId('channel-test'))
    expect(await screen.findByText('渠道“openai-main”测试成功（gpt-4o-mini），耗时 1.23 s。')).toBeInTheDocument()
    await waitFor(() => expect(within(screen.getByTestId('channel-row-1')).getByTestId('channel-response')).toHaveTextContent('1.23 s'))

    // No test model: asked to set one first, nothing sent.
    await user.click(within(screen.getByTestId('channel-row-2')).getByTestId('channel-test'))
    expect(await screen.findByText('请先设置测试模型再进行测试！')).toBeInTheDocument()

    await user.click(within(screen.getByTestId('channel-row-1')).getByTestId('channel-balance'))
    expect(await screen.findByText('渠道“openai-main”余额已更新：$12.34')).toBeInTheDocument()

    await user.click(within(screen.getByTestId('channel-row-1')).getByTestId('channel-more'))
    await user.click(await screen.findByTestId('channel-copy'))
    expect(await screen.findByText('已将渠道“openai-main”复制为新渠道 #3！')).toBeInTheDocument()
    expect(await screen.findByTestId('channel-row-3')).toHaveTextContent('openai-main_copy')

    await user.click(within(screen.getByTestId('channel-row-1')).getByTestId('channel-toggle'))
    expect(await screen.findByText('渠道已禁用！')).toBeInTheDocument()

    await user.click(within(screen.getByTestId('channel-row-1')).getByTestId('channel-more'))
    await user.click(await screen.findByTestId('channel-delete'))
    await user.click(within(await screen.findByTestId('channel-delete-dialog')).getByTestId('channel-delete-dialog-confirm'))
    expect(await screen.findByText('渠道已删除！')).toBeInTheDocument()
    expect(calls).toEqual([
      'GET /api/channel/test/1',
      'GET /api/channel/update_balance/1',
      'POST /api/channel/copy/1',
      'PUT /api/channel/status',
      'DELETE /api/channel/1',
    ])
    server.events.removeAllListeners()
  })

  it('a failed test is reported by the central handler and stays on the row as failed', async () => {
    resetChannelMocks([fast])
    signIn()
    server.use(
      http.get('*/api/channel/test/:id', () =>
        HttpResponse.json({ success: false, message: 'invalid api key', code: 'channel_test_failed' }, { status: 502 }),
      ),
    )
    renderApp('/panel/channel')
    await userEvent.setup().click(within(await screen.findByTestId('channel-row-1')).getByTestId('channel-test'))
    // The code's message says in Chinese what failed and carries the upstream's answer.
    expect(await screen.findByText('错误：渠道测试失败：invalid api key')).toBeInTheDocument()
    const state = within(screen.getByTestId('channel-row-1')).getByTestId('channel-test-state')
    expect(state).toHaveTextContent('测试失败')
    expect(state).toHaveAttribute('title', '渠道测试失败：invalid api key')
  })

  it('batch-deletes the selected rows, deletes disabled channels and tests all', async () => {
    resetChannelMocks([fast, claude, azure])
    signIn()
    let batch: unknown
    let disabledCalled = false
    server.use(
      http.post('*/api/channel/batch_delete', async ({ request }) => {
        batch = await request.json()
        return ok({ deleted: 2 })
      }),
      http.delete('*/api/channel/disabled', () => {
        disabledCalled = true
        return ok({ deleted: 1 })
      }),
      http.get('*/api/channel/test', () =>
        HttpResponse.json({
          success: true,
          message: '',
          data: { tested: 3, failed: 1, disabled: 1, enabled: 0, failures: [{ id: 2, name: 'claude', message: 'credit balance is too low' }] },
        }),
      ),
    )
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-3')).getByTestId('channel-select'))
    await user.click(within(screen.getByTestId('channel-row-1')).getByTestId('channel-select'))
    await user.click(screen.getByTestId('channel-batch-delete'))
    const bulk = await screen.findByTestId('channel-bulk-dialog')
    expect(bulk).toHaveTextContent('确定删除所选的 2 个渠道吗？')
    await user.click(within(bulk).getByTestId('channel-bulk-dialog-confirm'))
    await waitFor(() => expect(batch).toEqual({ ids: [3, 1] }))
    expect(await screen.findByText('已删除 2 个渠道！')).toBeInTheDocument()
    expect(screen.queryByTestId('channel-batch-delete')).not.toBeInTheDocument()

    await user.click(screen.getByTestId('channel-delete-disabled'))
    await user.click(within(await screen.findByTestId('channel-bulk-dialog')).getByTestId('channel-bulk-dialog-confirm'))
    await waitFor(() => expect(disabledCalled).toBe(true))

    // Not a green toast: a dialog that names the failed channel and says why.
    await user.click(screen.getByTestId('channel-test-all'))
    const result = await screen.findByTestId('channel-test-all-result')
    expect(result).toHaveTextContent('3 个渠道中有 1 个测试失败')
    expect(within(result).getByTestId('channel-test-failure')).toHaveTextContent('#2 claude')
    expect(within(result).getByTestId('channel-test-failure')).toHaveTextContent('credit balance is too low')
    expect(screen.queryByText('已测试 3 个渠道：失败 1 个，禁用 1 个，启用 0 个。', { selector: '[data-sonner-toast] *' })).not.toBeInTheDocument()
  })

  it('applies tag operations to every channel of a tag', async () => {
    resetChannelMocks([fast, claude, azure])
    signIn()
    const edits: unknown[] = []
    server.use(
      http.put('*/api/channel/tag', async ({ request }) => {
        edits.push(await request.json())
        return ok({ updated: 2 })
      }),
    )
    const { user, dialog } = await openDialog('/panel/channel', 'channel-tags', 'channel-tags-dialog')
    const row = await within(dialog).findByTestId('channel-tag-team-a')
    expect(row).toHaveTextContent('2')
    await user.type(within(row).getByLabelText('标签 team-a 的优先级'), '7')
    await user.click(within(row).getByTestId('channel-tag-save'))
    await waitFor(() => expect(edits).toEqual([{ tag: 'team-a', priority: 7 }]))
    expect(await screen.findByText('已更新标签 team-a 下的 2 个渠道！')).toBeInTheDocument()
    await user.click(within(row).getByTestId('channel-tag-disable'))
    await waitFor(() => expect(edits[1]).toEqual({ tag: 'team-a', status: 2 }))
  })
})

describe('channels batch edits', { timeout: 20_000 }, () => {
  function watchBatch() {
    const bodies: { path: string; body: unknown }[] = []
    server.events.on('request:start', async ({ request }) => {
      const url = new URL(request.url)
      if (url.pathname.startsWith('/api/channel/batch/')) bodies.push({ path: url.pathname, body: await request.clone().json() })
    })
    return bodies
  }

  it('sets the Azure API version of every Azure channel after a confirmation', async () => {
    resetChannelMocks([fast, claude, azure])
    signIn()
    const bodies = watchBatch()
    const { user } = openScreen('/panel/channel')
    await screen.findByTestId('channel-row-3')
    await user.click(screen.getByTestId('channel-batch'))
    await user.click(await screen.findByTestId('channel-batch-azure'))
    const dialog = await screen.findByTestId('channel-batch-dialog')
    expect(within(dialog).getByTestId('channel-batch-target')).toHaveTextContent('未选择渠道：将作用于所有 Azure OpenAI 渠道。')
    await user.type(within(dialog).getByTestId('channel-batch-value'), 'latest')
    await user.click(within(dialog).getByTestId('channel-batch-apply'))
    expect(await within(dialog).findByText('API 版本格式应为 2024-10-21 或 2025-01-01-preview')).toBeInTheDocument()
    await user.clear(within(dialog).getByTestId('channel-batch-value'))
    await user.type(within(dialog).getByTestId('channel-batch-value'), '2025-01-01-preview')
    await user.click(within(dialog).getByTestId('channel-batch-apply'))
    expect(within(dialog).getByTestId('channel-batch-question')).toHaveTextContent('确定将 API 版本设置为 2025-01-01-preview 吗？')
    expect(bodies).toEqual([])
    await user.click(within(dialog).getByTestId('channel-batch-confirm'))
    expect(await screen.findByText('已更新 1 个 Azure 渠道的 API 版本！')).toBeInTheDocument()
    expect(bodies).toEqual([{ path: '/api/channel/batch/azure_api', body: { value: '2025-01-01-preview' } }])
    await waitFor(() => expect(screen.queryByTestId('channel-batch-dialog')).not.toBeInTheDocument())
    server.events.removeAllListeners()
  })

  it('sends the selected ids and shows the channels that kept a removed model', async () => {
    const solo = mockChannel({ id: 4, name: 'solo', models: 'gpt-4o' })
    resetChannelMocks([fast, claude, azure, solo])
    signIn()
    const bodies = watchBatch()
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-4')).getByTestId('channel-select'))
    await user.click(within(screen.getByTestId('channel-row-1')).getByTestId('channel-select'))
    await user.click(screen.getByTestId('channel-batch'))
    await user.click(await screen.findByTestId('channel-batch-model'))
    const dialog = await screen.findByTestId('channel-batch-dialog')
    expect(within(dialog).getByTestId('channel-batch-target')).toHaveTextContent('将作用于所选的 2 个渠道。')
    await user.click(within(dialog).getByTestId('channel-batch-apply'))
    expect(await within(dialog).findByText('模型名称不能为空')).toBeInTheDocument()
    await user.type(within(dialog).getByTestId('channel-batch-value'), ' gpt-4o ')
    await user.click(within(dialog).getByTestId('channel-batch-apply'))
    await user.click(within(dialog).getByTestId('channel-batch-confirm'))
    expect(await screen.findByText('已从 1 个渠道中删除该模型！')).toBeInTheDocument()
    expect(await within(dialog).findByTestId('channel-batch-kept')).toHaveTextContent('以下渠道只剩这一个模型，已保留：solo')
    expect(bodies).toEqual([{ path: '/api/channel/batch/del_model', body: { ids: [4, 1], value: 'gpt-4o' } }])
    server.events.removeAllListeners()
  })
})
