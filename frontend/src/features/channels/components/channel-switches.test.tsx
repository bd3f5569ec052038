import { configure, screen, waitFor, within } from '@testing-library/react'
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { ok, openDialog, openScreen, signInAs } from '@/test/helpers'
import { server } from '@/test/server'
import { channelHandlers, mockChannel, MOCK_SWITCHES, resetChannelMocks } from '../mocks/handlers'

// The screen is a lazy route: on a busy machine its first render can take more than a second.
configure({ asyncUtilTimeout: 5_000 })

const signIn = () => signInAs(mockRoot, channelHandlers)

/** Records the bodies of POST and PUT /api/channel (answered as the server would). */
function recordSaves() {
  const saved: { method: string; body: Record<string, unknown> }[] = []
  server.use(
    http.post('*/api/channel', async ({ request }) => {
      saved.push({ method: 'POST', body: (await request.json()) as Record<string, unknown> })
      return ok({ ids: [9], count: 1 }, 201)
    }),
    http.put('*/api/channel', async ({ request }) => {
      const body = (await request.json()) as Record<string, unknown>
      saved.push({ method: 'PUT', body })
      return ok(mockChannel(body))
    }),
  )
  return saved
}

const switchIds = (dialog: HTMLElement) =>
  within(dialog)
    .queryAllByTestId(/^channel-switch-/)
    .map((el) => el.getAttribute('data-testid'))

describe('channel form: provider switches', { timeout: 30_000 }, () => {
  it('offers only the switches the selected type supports, read once from /api/channel/switches', async () => {
    resetChannelMocks([])
    signIn()
    let reads = 0
    server.use(
      http.get('*/api/channel/switches', () => {
        reads++
        return ok(MOCK_SWITCHES)
      }),
    )
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    const type = within(dialog).getByTestId('channel-form-type')
    // OpenAI has none: no section once the list is in.
    await waitFor(() => expect(reads).toBe(1))
    await waitFor(() => expect(within(dialog).queryByTestId('channel-form-switches')).toBeNull())

    await user.selectOptions(type, '14')
    const section = within(dialog).getByTestId('channel-form-switches')
    expect(section).toHaveTextContent('供应商开关')
    expect(switchIds(dialog)).toEqual(['channel-switch-web_search', 'channel-switch-code_execution'])
    expect(within(section).getByRole('switch', { name: '联网搜索' })).not.toBeChecked()
    expect(section).toHaveTextContent('Anthropic：网页搜索服务端工具')

    await user.selectOptions(type, '17')
    expect(switchIds(dialog)).toEqual(['channel-switch-web_search'])
    await user.selectOptions(type, '20')
    expect(switchIds(dialog)).toEqual(['channel-switch-web_search', 'channel-switch-plugin'])
    await user.selectOptions(type, '16')
    expect(switchIds(dialog)).toEqual(['channel-switch-web_search', 'channel-switch-knowledge_id', 'channel-switch-knowledge_template'])
    // The placeholders reach the screen as written (not eaten by i18next's own {{...}}).
    expect(within(dialog).getByText(/须包含 \{\{knowledge\}\} 和 \{\{question\}\} 两个占位符，最多 4000 个字符/)).toBeInTheDocument()
    await user.selectOptions(type, '25')
    expect(switchIds(dialog)).toEqual(['channel-switch-web_search', 'channel-switch-code_execution'])
    await user.selectOptions(type, '28')
    expect(within(dialog).queryByTestId('channel-form-switches')).toBeNull()

    // Kept: opening the form again does not read the list again.
    await user.click(within(dialog).getByRole('button', { name: '取消' }))
    await waitFor(() => expect(screen.queryByTestId('channel-form-dialog')).toBeNull())
    await user.click(screen.getByTestId('channel-create'))
    await user.selectOptions(within(await screen.findByTestId('channel-form-dialog')).getByTestId('channel-form-type'), '42')
    expect(switchIds(screen.getByTestId('channel-form-dialog'))).toEqual(['channel-switch-web_search', 'channel-switch-code_execution'])
    expect(reads).toBe(1)
  })

  it('writes the switches that are on into the config of a new channel', async () => {
    resetChannelMocks([])
    signIn()
    const saved = recordSaves()
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'claude')
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '14')
    await user.type(within(dialog).getByLabelText('密钥'), 'sk-ant')
    await user.type(within(dialog).getByLabelText('模型'), 'claude-sonnet-4-0')
    await user.click(await within(dialog).findByRole('switch', { name: '联网搜索' }))
    await user.click(within(dialog).getByRole('switch', { name: '代码执行' }))
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body).toMatchObject({ type: 14, config: { web_search: true, code_execution: true } })

    // Off switches are left out: only web search this time.
    await user.click(screen.getByTestId('channel-create'))
    const again = await screen.findByTestId('channel-form-dialog')
    await user.type(within(again).getByLabelText('名称'), 'gemini')
    await user.selectOptions(within(again).getByTestId('channel-form-type'), '25')
    await user.type(within(again).getByLabelText('密钥'), 'AIza')
    await user.type(within(again).getByLabelText('模型'), 'gemini-2.5-flash')
    await user.click(await within(again).findByRole('switch', { name: '联网搜索' }))
    await user.click(within(again).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(2))
    expect(saved[1]?.body.config).toEqual({ web_search: true })
  })

  it('editing: shows the stored switches, and a change of type drops those the new type lacks', async () => {
    resetChannelMocks([
      mockChannel({ id: 7, type: 14, name: 'claude', models: 'claude-*', config: { web_search: true, code_execution: true, custom_key: 'kept' } }),
    ])
    signIn()
    const saved = recordSaves()
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-7')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    expect(await within(dialog).findByRole('switch', { name: '联网搜索' })).toBeChecked()
    expect(within(dialog).getByRole('switch', { name: '代码执行' })).toBeChecked()

    // OpenAI has neither: the section goes; DashScope has web search only.
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '1')
    expect(within(dialog).queryByTestId('channel-form-switches')).toBeNull()
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '17')
    expect(switchIds(dialog)).toEqual(['channel-switch-web_search'])
    expect(within(dialog).getByRole('switch', { name: '联网搜索' })).toBeChecked()
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body).toMatchObject({ id: 7, type: 17 })
    expect(saved[0]?.body.config).toEqual({ web_search: true, custom_key: 'kept' })
  })

  it('switching a stored switch off leaves it out of the config', async () => {
    resetChannelMocks([mockChannel({ id: 8, type: 25, name: 'gemini', models: 'gemini-*', config: { web_search: true, code_execution: true } })])
    signIn()
    const saved = recordSaves()
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-8')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    await user.click(await within(dialog).findByRole('switch', { name: '代码执行' }))
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body.config).toEqual({ web_search: true })
  })

  it('checks OpenRouter plugins as the server does and sends them as an object', async () => {
    resetChannelMocks([])
    signIn()
    const saved = recordSaves()
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'openrouter')
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '20')
    await user.type(within(dialog).getByLabelText('密钥'), 'sk-or')
    await user.type(within(dialog).getByLabelText('模型'), 'openai/gpt-4o')
    const plugin = await within(dialog).findByLabelText('插件')
    const enter = async (text: string) => {
      await user.clear(plugin)
      await user.click(plugin)
      await user.paste(text)
      await user.click(within(dialog).getByTestId('channel-form-submit'))
    }
    await enter('["web"]')
    expect(await within(dialog).findByText('插件须为 JSON 对象：插件 ID → 选项对象')).toBeInTheDocument()
    await enter('{"bad id": {}}')
    expect(await within(dialog).findByText('“bad id”不是有效的插件 ID：1 到 64 个字母、数字、-、_、. 或 :')).toBeInTheDocument()
    await enter('{"web": {"id": "other"}}')
    expect(await within(dialog).findByText('“web”的选项须为 JSON 对象（没有选项时写 {}），且不能包含 id')).toBeInTheDocument()
    await enter(`{"web": {"note": "${'x'.repeat(4100)}"}}`)
    expect(await within(dialog).findByText('插件 JSON 最多 4096 字节')).toBeInTheDocument()
    expect(saved).toEqual([])

    await enter('{"file-parser": {"pdf": {"engine": "pdf-text"}}}')
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body.config).toEqual({ plugin: { 'file-parser': { pdf: { engine: 'pdf-text' } } } })
  })

  it('checks the Zhipu knowledge base and its template, placeholders included', async () => {
    resetChannelMocks([])
    signIn()
    const saved = recordSaves()
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'zhipu')
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '16')
    await user.type(within(dialog).getByLabelText('密钥'), 'k')
    await user.type(within(dialog).getByLabelText('模型'), 'glm-4-plus')
    const id = await within(dialog).findByLabelText('知识库 ID')
    const template = within(dialog).getByLabelText('知识库提示模板')
    const setTemplate = async (text: string) => {
      await user.clear(template)
      await user.click(template)
      await user.paste(text)
    }
    await setTemplate('Answer from {{knowledge}}')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('提示模板需要先填写知识库 ID')).toBeInTheDocument()
    await user.type(id, 'kb 1')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('知识库 ID 只能包含字母、数字、-、_ 和 .，最多 128 个')).toBeInTheDocument()
    expect(within(dialog).getByText('提示模板须同时包含 {{knowledge}} 和 {{question}}')).toBeInTheDocument()
    expect(saved).toEqual([])

    await user.clear(id)
    await user.type(id, 'kb-1.v2')
    await setTemplate('From {{knowledge}} answer {{question}}')
    await user.click(within(dialog).getByRole('switch', { name: '联网搜索' }))
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body.config).toEqual({
      web_search: true,
      knowledge_id: 'kb-1.v2',
      knowledge_template: 'From {{knowledge}} answer {{question}}',
    })
  })

  it('says so when the list cannot be read, and keeps the stored switches', async () => {
    resetChannelMocks([mockChannel({ id: 4, type: 14, name: 'claude', models: 'claude-*', config: { web_search: true } })])
    signIn()
    server.use(http.get('*/api/channel/switches', () => HttpResponse.json({ success: false, message: 'boom' }, { status: 500 })))
    const saved = recordSaves()
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-4')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    expect(await within(dialog).findByTestId('channel-form-switches-error')).toHaveTextContent('供应商开关列表加载失败')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body.config).toEqual({ web_search: true })
  })
})

describe('channel form: anthropic-beta flags', { timeout: 30_000 }, () => {
  const ADD = '添加 anthropic-beta 标志'
  const REMOVE = '移除客户端标志'

  it('are offered only for the types of Anthropic\'s protocol (Anthropic, AWS Bedrock, Vertex AI)', async () => {
    resetChannelMocks([])
    signIn()
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    const type = within(dialog).getByTestId('channel-form-type')
    expect(within(dialog).queryByTestId('channel-form-anthropic-beta')).toBeNull()
    expect(within(dialog).queryByLabelText(ADD)).toBeNull()
    for (const id of ['14', '32', '42']) {
      await user.selectOptions(type, id)
      const relaying = within(dialog).getByTestId('channel-form-relaying')
      expect(within(relaying).getByLabelText(ADD)).toHaveAttribute('placeholder', 'context-1m-2025-08-07')
      expect(within(relaying).getByLabelText(REMOVE)).toHaveAttribute('placeholder', 'context-management-*')
      expect(relaying).toHaveTextContent('前缀* 移除所有以该前缀开头的标志，* 移除全部')
    }
    await user.selectOptions(type, '1')
    expect(within(dialog).queryByTestId('channel-form-anthropic-beta')).toBeNull()
    await user.selectOptions(type, '25')
    expect(within(dialog).queryByLabelText(REMOVE)).toBeNull()
  })

  it('saves the trimmed lists into the config beside the other settings', async () => {
    resetChannelMocks([])
    signIn()
    const saved = recordSaves()
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'claude')
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '14')
    await user.type(within(dialog).getByLabelText('密钥'), 'sk-ant')
    await user.type(within(dialog).getByLabelText('模型'), 'claude-sonnet-4-0')
    await user.click(await within(dialog).findByRole('switch', { name: '联网搜索' }))
    await user.type(within(dialog).getByLabelText(ADD), ' context-1m-2025-08-07 ,, token-efficient-tools-2025-02-19 ,context-1m-2025-08-07')
    await user.type(within(dialog).getByLabelText(REMOVE), ' context-management-* , interleaved-thinking-2025-05-14 ')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body.config).toEqual({
      web_search: true,
      anthropic_beta: {
        add: ['context-1m-2025-08-07', 'token-efficient-tools-2025-02-19'],
        remove: ['context-management-*', 'interleaved-thinking-2025-05-14'],
      },
    })

    // Removing every client flag alone: no empty add list is sent.
    await user.click(screen.getByTestId('channel-create'))
    const again = await screen.findByTestId('channel-form-dialog')
    await user.type(within(again).getByLabelText('名称'), 'vertex')
    await user.selectOptions(within(again).getByTestId('channel-form-type'), '42')
    await user.type(within(again).getByLabelText('密钥'), 'vertex-key')
    await user.type(within(again).getByLabelText('模型'), 'claude-sonnet-4-0')
    await user.type(within(again).getByLabelText(REMOVE), '*')
    await user.click(within(again).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(2))
    expect(saved[1]?.body.config).toEqual({ anthropic_beta: { remove: ['*'] } })
  })

  it('refuses what the server would, with translated messages, and saves nothing', async () => {
    resetChannelMocks([])
    signIn()
    const saved = recordSaves()
    const { user, dialog } = await openDialog('/panel/channel', 'channel-create', 'channel-form-dialog')
    await user.type(within(dialog).getByLabelText('名称'), 'bedrock')
    await user.selectOptions(within(dialog).getByTestId('channel-form-type'), '32')
    await user.type(within(dialog).getByLabelText('密钥'), 'AKIA|secret|us-east-1')
    await user.type(within(dialog).getByLabelText('模型'), 'claude-sonnet-4-0')
    const add = within(dialog).getByLabelText(ADD)
    const remove = within(dialog).getByLabelText(REMOVE)
    const enter = async (input: HTMLElement, text: string) => {
      await user.clear(input)
      await user.click(input)
      await user.paste(text)
    }
    await enter(add, 'context-1m-2025-08-07,Context-1M')
    await enter(remove, 'context-*-2025')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('“Context-1M”不是有效的标志：只能包含小写字母、数字和 -，最多 64 个字符')).toBeInTheDocument()
    expect(within(dialog).getByText(/^“context-\*-2025”无效：须为由小写字母、数字和 - 组成的标志（最多 64 个字符）/)).toBeInTheDocument()

    // A prefix* or * is only for removal; too long; too many.
    await enter(add, 'context-*')
    await enter(remove, `${'x'.repeat(65)}*`)
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('“context-*”不是有效的标志：只能包含小写字母、数字和 -，最多 64 个字符')).toBeInTheDocument()
    expect(within(dialog).getByText(/^“x{65}\*”无效/)).toBeInTheDocument()
    await enter(add, Array.from({ length: 33 }, (_, i) => `flag-${i}`).join(','))
    await enter(remove, '**')
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    expect(await within(dialog).findByText('最多 32 个标志')).toBeInTheDocument()
    expect(within(dialog).getByText(/^“\*\*”无效/)).toBeInTheDocument()
    expect(saved).toEqual([])

    await enter(add, Array.from({ length: 32 }, (_, i) => `flag-${i}`).join(','))
    await enter(remove, `${'x'.repeat(64)}*`)
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body.config).toEqual({
      anthropic_beta: { add: Array.from({ length: 32 }, (_, i) => `flag-${i}`), remove: [`${'x'.repeat(64)}*`] },
    })
  })

  it('editing: shows the stored flags, removes the key when both are emptied, and drops it on a type without them', async () => {
    resetChannelMocks([
      mockChannel({
        id: 7,
        type: 14,
        name: 'claude',
        models: 'claude-*',
        config: { web_search: true, custom_key: 'kept', anthropic_beta: { add: ['context-1m-2025-08-07'], remove: ['context-management-*', 'x'] } },
      }),
      mockChannel({ id: 8, type: 32, name: 'bedrock', models: 'claude-*', config: { anthropic_beta: { remove: ['*'] }, region_hint: 1 } }),
    ])
    signIn()
    const saved = recordSaves()
    const { user } = openScreen('/panel/channel')
    await user.click(within(await screen.findByTestId('channel-row-7')).getByTestId('channel-edit'))
    const dialog = await screen.findByTestId('channel-form-dialog')
    const add = within(dialog).getByLabelText(ADD)
    const remove = within(dialog).getByLabelText(REMOVE)
    expect(add).toHaveValue('context-1m-2025-08-07')
    expect(remove).toHaveValue('context-management-*,x')
    // Unchanged: saved as it was, beside the other settings.
    await user.click(within(dialog).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(1))
    expect(saved[0]?.body.config).toEqual({
      web_search: true,
      custom_key: 'kept',
      anthropic_beta: { add: ['context-1m-2025-08-07'], remove: ['context-management-*', 'x'] },
    })

    // Both emptied: the key goes.
    await user.click(within(screen.getByTestId('channel-row-7')).getByTestId('channel-edit'))
    const again = await screen.findByTestId('channel-form-dialog')
    await user.clear(within(again).getByLabelText(ADD))
    await user.clear(within(again).getByLabelText(REMOVE))
    await user.click(within(again).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(2))
    expect(saved[1]?.body.config).toEqual({ web_search: true, custom_key: 'kept' })

    // The Bedrock channel: loaded, then moved to OpenAI, which takes no flags.
    await user.click(within(screen.getByTestId('channel-row-8')).getByTestId('channel-edit'))
    const bedrock = await screen.findByTestId('channel-form-dialog')
    expect(within(bedrock).getByLabelText(ADD)).toHaveValue('')
    expect(within(bedrock).getByLabelText(REMOVE)).toHaveValue('*')
    await user.selectOptions(within(bedrock).getByTestId('channel-form-type'), '1')
    expect(within(bedrock).queryByLabelText(REMOVE)).toBeNull()
    await user.click(within(bedrock).getByTestId('channel-form-submit'))
    await waitFor(() => expect(saved).toHaveLength(3))
    expect(saved[2]?.body).toMatchObject({ id: 8, type: 1 })
    expect(saved[2]?.body.config).toEqual({ region_hint: 1 })
  })
})
