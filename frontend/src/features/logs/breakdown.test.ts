import { describe, expect, it } from 'vitest'
import { costLines, parseCostMeta } from './breakdown'

const META = {
  group_ratio: 1.5,
  input_ratio: 0.075,
  output_ratio: 0.3,
  price_type: 'tokens',
  usage: { prompt_tokens: 1000, completion_tokens: 200, cached_read_tokens: 400, reasoning_tokens: 50, cached_tokens: 0 },
  usage_estimated: false,
}

describe('cost breakdown', () => {
  it('reads the ratios, the usage details that are not zero and the flags', () => {
    const m = parseCostMeta(META)
    expect(m).toMatchObject({ groupRatio: 1.5, inputRatio: 0.075, outputRatio: 0.3, priceType: 'tokens', usageEstimated: false })
    expect(m.usage).toEqual({ cached_read_tokens: 400, reasoning_tokens: 50 })
    expect(parseCostMeta(JSON.stringify({ ...META, uncapped_quota: 900 })).uncappedQuota).toBe(900)
  })

  it('reads the text and image token details and what a cache hit cost and saved', () => {
    const m = parseCostMeta({
      ...META,
      usage: { ...META.usage, input_text_tokens: 42, output_text_tokens: 7, input_image_tokens: 1258, output_image_tokens: 0 },
      cache_full_quota: 1500,
      cache_saved_quota: 1200,
    })
    expect(m.usage).toEqual({ cached_read_tokens: 400, reasoning_tokens: 50, input_text_tokens: 42, output_text_tokens: 7, input_image_tokens: 1258 })
    expect(m).toMatchObject({ cacheFullQuota: 1500, cacheSavedQuota: 1200 })
    // A free hit saves everything; logs that were not cache hits carry neither.
    expect(parseCostMeta({ ...META, cache_full_quota: 90, cache_saved_quota: 90 })).toMatchObject({ cacheFullQuota: 90, cacheSavedQuota: 90 })
    expect(parseCostMeta(META)).toMatchObject({ cacheFullQuota: undefined, cacheSavedQuota: undefined })
  })

  it('prices input and output tokens times the group ratio', () => {
    const lines = costLines({ prompt_tokens: 1000, completion_tokens: 200 }, parseCostMeta(META))
    expect(lines.map((l) => [l.id, l.amount, l.ratio, l.quota])).toEqual([
      ['input', 1000, 0.075, 112.5],
      ['output', 200, 0.3, 90],
    ])
  })

  it('prices a per-call model as 1000 × the ratio per call', () => {
    const lines = costLines({ prompt_tokens: 0, completion_tokens: 0 }, parseCostMeta({ input_ratio: 0.02, group_ratio: 2, price_type: 'times' }))
    expect(lines).toEqual([{ id: 'perCall', amount: 1, ratio: 0.02, quota: 40 }])
  })

  it('has nothing to show for logs without price data, and reads error details', () => {
    expect(costLines({ prompt_tokens: 1, completion_tokens: 1 }, parseCostMeta(null))).toEqual([])
    expect(costLines({ prompt_tokens: 1, completion_tokens: 1 }, parseCostMeta('not json'))).toEqual([])
    expect(parseCostMeta({ status: 502, code: 'upstream_error' })).toMatchObject({ status: 502, code: 'upstream_error' })
  })
})
