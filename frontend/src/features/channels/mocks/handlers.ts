import { http, HttpResponse } from 'msw'
import type { Channel, ChannelHealth, ChannelTypeSwitches } from '../types'

const NOW = 1_735_689_600

export function mockChannel(overrides: Partial<Channel> = {}): Channel {
  return {
    id: 1,
    type: 1,
    name: 'openai-main',
    base_url: 'https://api.openai.com',
    group: 'default',
    models: 'gpt-4o-mini,gpt-4o',
    model_mapping: '{}',
    priority: 0,
    weight: 1,
    tag: '',
    proxy: '',
    test_model: 'gpt-4o-mini',
    status: 1,
    response_time: 0,
    test_time: 0,
    used_quota: 0,
    balance: 0,
    balance_updated_at: 0,
    custom_headers: {},
    config: {},
    created_at: NOW,
    updated_at: NOW,
    ...overrides,
  }
}

/** GET /api/channel/switches as the server answers it (the types with at least one switch). */
export const MOCK_SWITCHES: ChannelTypeSwitches[] = [
  { type: 14, name: 'Anthropic', switches: ['web_search', 'code_execution'] },
  { type: 16, name: 'Zhipu', switches: ['web_search', 'knowledge_id', 'knowledge_template'] },
  { type: 17, name: 'Ali DashScope', switches: ['web_search'] },
  { type: 20, name: 'OpenRouter', switches: ['web_search', 'plugin'] },
  { type: 25, name: 'Google Gemini', switches: ['web_search', 'code_execution'] },
  { type: 42, name: 'Vertex AI', switches: ['web_search', 'code_execution'] },
]

/** GET /api/channel/health: no breaker open unless a test says otherwise. */
let health: ChannelHealth = { circuit_breaker_enabled: false, latency_aware_routing: false, pairs: [] }

export function setChannelHealthMock(next: ChannelHealth): void {
  health = next
}

/** A fake channel store with the list filters and the operations of the channels screen. */
let channels: Channel[] = []
let nextId = 1

export function resetChannelMocks(initial: Channel[] = []): void {
  channels = initial.map((c) => ({ ...c }))
  health = { circuit_breaker_enabled: false, latency_aware_routing: false, pairs: [] }
  nextId = Math.max(0, ...channels.map((c) => c.id)) + 1
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })
const notFound = () => HttpResponse.json({ success: false, message: 'channel not found', code: 'not_found' }, { status: 404 })
const find = (id: unknown) => channels.find((c) => c.id === Number(id))

export const channelHandlers = [
  http.get('*/api/channel/switches', () => ok(MOCK_SWITCHES)),
  http.get('*/api/channel/health', () => ok(health)),
  http.get('*/api/channel', ({ request }) => {
    const url = new URL(request.url)
    const q = (k: string) => url.searchParams.get(k) ?? ''
    const page = Number(q('page') || 1)
    const size = Number(q('size') || 10)
    const order = q('order') || '-id'
    const field = order.replace(/^-/, '') as keyof Channel
    const sign = order.startsWith('-') ? -1 : 1
    const matched = channels
      .filter((c) => !q('keyword') || c.name.includes(q('keyword')) || String(c.id) === q('keyword'))
      .filter((c) => !q('type') || c.type === Number(q('type')))
      .filter((c) => !q('status') || c.status === Number(q('status')))
      .filter((c) => !q('group') || c.group.split(',').includes(q('group')))
      .filter((c) => !q('tag') || c.tag === q('tag'))
      .filter((c) => !q('model') || c.models.split(',').includes(q('model')))
      .sort((a, b) => (Number(a[field]! > b[field]!) - Number(a[field]! < b[field]!)) * sign)
    return ok({ data: matched.slice((page - 1) * size, page * size), page, size, total_count: matched.length })
  }),
  http.post('*/api/channel', async ({ request }) => {
    const body = (await request.json()) as Partial<Channel> & { key: string }
    const ids: number[] = []
    for (let i = 0; i < body.key.split('\n').length; i++) {
      const id = nextId++
      ids.push(id)
      const { key: _key, ...rest } = body
      channels.push(mockChannel({ ...rest, id, model_mapping: String(rest.model_mapping ?? '{}'), custom_headers: {} }))
    }
    return ok({ ids, count: ids.length }, 201)
  }),
  http.put('*/api/channel/status', async ({ request }) => {
    const body = (await request.json()) as { id: number; status: number }
    const channel = find(body.id)
    if (!channel) return notFound()
    channel.status = body.status
    return ok(body)
  }),
  http.put('*/api/channel', async ({ request }) => {
    const body = (await request.json()) as Partial<Channel> & { id: number }
    const channel = find(body.id)
    if (!channel) return notFound()
    const { key: _key, custom_headers: _h, ...rest } = body
    Object.assign(channel, rest)
    return ok(channel)
  }),
  http.get('*/api/channel/test', () => ok({ tested: channels.length, failed: 0, disabled: 0, enabled: 0 })),
  http.get('*/api/channel/test/:id', ({ params }) => {
    const channel = find(params.id)
    if (!channel) return notFound()
    channel.response_time = 1234
    channel.test_time = NOW
    return ok({ time_ms: 1234, model: channel.test_model, enabled: false })
  }),
  http.get('*/api/channel/update_balance/:id', ({ params }) => {
    const channel = find(params.id)
    if (!channel) return notFound()
    channel.balance = 12_340_000
    return ok({ balance: 12.34 })
  }),
  http.get('*/api/channel/fetch_models/:id', () => ok(['gpt-4o', 'gpt-4.1', 'o3-mini'])),
  http.post('*/api/channel/copy/:id', ({ params }) => {
    const channel = find(params.id)
    if (!channel) return notFound()
    const id = nextId++
    channels.push({ ...channel, id, name: `${channel.name}_copy`, used_quota: 0, balance: 0, response_time: 0, test_time: 0 })
    return ok({ id }, 201)
  }),
  http.post('*/api/channel/batch_delete', async ({ request }) => {
    const { ids } = (await request.json()) as { ids: number[] }
    const before = channels.length
    channels = channels.filter((c) => !ids.includes(c.id))
    return ok({ deleted: before - channels.length })
  }),
  http.delete('*/api/channel/disabled', () => {
    const before = channels.length
    channels = channels.filter((c) => c.status === 1)
    return ok({ deleted: before - channels.length })
  }),
  http.put('*/api/channel/batch/azure_api', async ({ request }) => {
    const { ids, value } = (await request.json()) as { ids?: number[]; value: string }
    const hit = channels.filter((c) => c.type === 3 && (!ids || ids.includes(c.id)) && c.config?.api_version !== value)
    for (const c of hit) c.config = { ...c.config, api_version: value }
    return ok({ updated: hit.length, ids: hit.map((c) => c.id) })
  }),
  http.put('*/api/channel/batch/del_model', async ({ request }) => {
    const { ids, value } = (await request.json()) as { ids?: number[]; value: string }
    const changed: number[] = []
    const kept: string[] = []
    for (const c of channels.filter((x) => !ids || ids.includes(x.id))) {
      const models = c.models.split(',')
      if (!models.includes(value)) continue
      const rest = models.filter((m) => m !== value)
      if (rest.length === 0) {
        kept.push(c.name)
        continue
      }
      c.models = rest.join(',')
      if (c.test_model === value) c.test_model = ''
      changed.push(c.id)
    }
    return ok({ updated: changed.length, ids: changed, kept })
  }),
  http.get('*/api/channel/tags', () => {
    const counts = new Map<string, number>()
    for (const c of channels) if (c.tag) counts.set(c.tag, (counts.get(c.tag) ?? 0) + 1)
    return ok([...counts].map(([tag, count]) => ({ tag, count })))
  }),
  http.put('*/api/channel/tag', async ({ request }) => {
    const body = (await request.json()) as { tag: string; priority?: number; weight?: number; status?: number }
    const hit = channels.filter((c) => c.tag === body.tag)
    for (const c of hit) {
      if (body.priority !== undefined) c.priority = body.priority
      if (body.weight !== undefined) c.weight = body.weight
      if (body.status !== undefined) c.status = body.status
    }
    return ok({ updated: hit.length })
  }),
  http.delete('*/api/channel/tag/:tag/disabled', ({ params }) => {
    const before = channels.length
    channels = channels.filter((c) => !(c.tag === params.tag && c.status !== 1))
    return ok({ deleted: before - channels.length })
  }),
  http.delete('*/api/channel/:id', ({ params }) => {
    if (!find(params.id)) return notFound()
    channels = channels.filter((c) => c.id !== Number(params.id))
    return ok(null)
  }),
]
