import { http, HttpResponse } from 'msw'
import { DEFAULT_EXTRA_RATIOS, type AvailableModel, type ModelOwner, type Price } from '../types'

/** A row as GET /api/prices returns it (all ten extra ratios listed). */
export function mockPrice(overrides: Partial<Price> = {}): Price {
  return {
    model: 'gpt-4o-mini',
    type: 'tokens',
    channel_type: 1,
    input: 0.075,
    output: 0.3,
    locked: false,
    updated_at: 1_735_689_600,
    ...overrides,
    extra_ratios: { ...DEFAULT_EXTRA_RATIOS, ...overrides.extra_ratios },
  }
}

export const MOCK_OWNERS: ModelOwner[] = [
  { id: 1, name: 'OpenAI', icon: '' },
  { id: 14, name: 'Anthropic', icon: '' },
]

/** A fake price table: list, create, update, delete, batch. */
let prices: Price[] = []

export function resetPricingMocks(initial: Price[] = []): void {
  prices = initial.map((p) => ({ ...p }))
}

const ok = (data: unknown, status = 200) => HttpResponse.json({ success: true, message: '', data }, { status })

export const pricingHandlers = [
  http.get('*/api/prices', () => ok(prices)),
  http.get('*/api/prices/warnings', () => ok({ unpriced_models: [], unknown_owner: [] })),
  http.get('*/api/available_model', () =>
    ok(prices.map((p): AvailableModel => ({ model: p.model, price: { ...p, extra: p.extra_ratios }, group_ratio: 1 }))),
  ),
  http.post('*/api/prices', async ({ request }) => {
    const body = (await request.json()) as Price
    if (prices.some((p) => p.model === body.model)) {
      return HttpResponse.json({ success: false, message: 'this model already has a price; model names are unique', code: 'model_taken' }, { status: 409 })
    }
    const row = mockPrice(body)
    prices.push(row)
    return ok(row, 201)
  }),
  http.put('*/api/prices', async ({ request }) => {
    const body = (await request.json()) as { model: string; price: Price }
    const i = prices.findIndex((p) => p.model === body.model)
    if (i < 0) return HttpResponse.json({ success: false, message: 'no price for this model' }, { status: 404 })
    prices[i] = mockPrice(body.price)
    return ok(prices[i])
  }),
  http.post('*/api/prices/delete', async ({ request }) => {
    const { models } = (await request.json()) as { models: string[] }
    const before = prices.length
    prices = prices.filter((p) => !models.includes(p.model))
    return ok({ deleted: before - prices.length })
  }),
  http.post('*/api/prices/batch', async ({ request }) => {
    const body = (await request.json()) as { prices: Price[] }
    for (const p of body.prices) {
      prices = prices.filter((x) => x.model !== p.model)
      prices.push(mockPrice(p))
    }
    return ok({ count: body.prices.length })
  }),
]
