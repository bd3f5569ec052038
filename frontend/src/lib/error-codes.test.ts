import { describe, expect, it } from 'vitest'
import en from '../../public/locales/en/errors.json'
import ja from '../../public/locales/ja/errors.json'
import zhCN from '../../public/locales/zh_CN/errors.json'
import zhHK from '../../public/locales/zh_HK/errors.json'
import { CONSOLE_ERROR_CODES } from './error-codes.gen'

/**
 * The codes the management API answers with come from the server's one `ErrorCode` enum
 * (crates/domain/src/code.rs), generated into error-codes.gen.ts; the server's test fails when
 * that file is stale. Every one needs a message in every language of the console.
 */
describe('server error codes', () => {
  it('the generated list holds the known codes', () => {
    expect(CONSOLE_ERROR_CODES.length).toBeGreaterThan(100)
    for (const known of ['invalid_credentials', 'group_in_use', 'required', 'unauthorized', 'invalid_voice_mapping', 'channel_test_failed']) {
      expect(CONSOLE_ERROR_CODES).toContain(known)
    }
  })

  it.each([
    ['en', en],
    ['ja', ja],
    ['zh_CN', zhCN],
    ['zh_HK', zhHK],
  ])('every one has a %s message, so no English server sentence reaches another language', (_, locale) => {
    const translated = new Set(Object.keys(locale.codes))
    const missing = CONSOLE_ERROR_CODES.filter((c) => !translated.has(c))
    expect(missing).toEqual([])
  })
})
