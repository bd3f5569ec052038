import { describe, expect, it } from 'vitest'
import { channelConfig, isValidBetaFlag, isValidBetaRemoval, mergeMapping, shortenFetchedModels, TTS_VOICES, type TtsVoice } from './schemas'
import { keyFormat, needsBaseUrl, servesChat, speaksOpenAi, takesAnthropicBeta } from './types'

const noVoices = Object.fromEntries(TTS_VOICES.map((v) => [v, ''])) as Record<TtsVoice, string>
const form = {
  api_version: '',
  region: '',
  only_chat: false,
  voices: noVoices,
  custom_parameter: '',
  web_search: false,
  code_execution: false,
  plugin: '',
  knowledge_id: '',
  knowledge_template: '',
  anthropic_beta_add: '',
  anthropic_beta_remove: '',
}

describe('channel config', () => {
  it('keeps unknown keys and destination keys the form does not show, and drops settings the type refuses', () => {
    const previous = { region: 'eu', custom_key: 1, voice_mapping: { alloy: 'x' }, custom_parameter: { a: 1 }, only_chat: true }
    // Now an Anthropic channel: no voices or parameters; only-chat off removes the key.
    expect(channelConfig(14, form, previous)).toEqual({ region: 'eu', custom_key: 1 })
    expect(channelConfig(42, { ...form, region: 'europe-west4', only_chat: true }, previous)).toEqual({
      region: 'europe-west4',
      custom_key: 1,
      only_chat: true,
    })
    expect(
      channelConfig(3, { ...form, api_version: '2025-01-01-preview', voices: { ...noVoices, nova: 'n2' }, custom_parameter: '{"top_p":1}' }),
    ).toEqual({ api_version: '2025-01-01-preview', voice_mapping: { nova: 'n2' }, custom_parameter: { top_p: 1 } })
    expect(channelConfig(3, form, { api_version: '2024-10-21' })).toEqual({})
  })

  it('the task types (Midjourney Proxy, Suno API, Kling) serve no chat and take no OpenAI settings', () => {
    const on = { ...form, only_chat: true, voices: { ...noVoices, alloy: 'x' }, custom_parameter: '{"a":1}' }
    for (const type of [34, 41, 53]) {
      expect(servesChat(type)).toBe(false)
      expect(speaksOpenAi(type)).toBe(false)
      expect(channelConfig(type, on, { only_chat: true, custom_key: 1 })).toEqual({ custom_key: 1 })
    }
    expect(servesChat(1)).toBe(true)
    expect(keyFormat(53)).toBe('kling')
    expect(keyFormat(1)).toBeUndefined()
    expect(needsBaseUrl(53)).toBe(false)
  })
})

describe('anthropic-beta flags in the config', () => {
  it('are written for the types of Anthropic\'s protocol only, trimmed, each once, empty lists left out', () => {
    const flags = { ...form, anthropic_beta_add: ' a-1 ,, b , a-1', anthropic_beta_remove: ' context-management-* ' }
    for (const type of [14, 32, 42]) {
      expect(takesAnthropicBeta(type)).toBe(true)
      expect(channelConfig(type, flags, { custom_key: 1 })).toEqual({
        custom_key: 1,
        anthropic_beta: { add: ['a-1', 'b'], remove: ['context-management-*'] },
      })
    }
    expect(channelConfig(14, { ...form, anthropic_beta_remove: '*' })).toEqual({ anthropic_beta: { remove: ['*'] } })
    // Both empty, or a type without them: the key goes.
    expect(channelConfig(14, form, { anthropic_beta: { add: ['a'] }, custom_key: 1 })).toEqual({ custom_key: 1 })
    expect(takesAnthropicBeta(1)).toBe(false)
    expect(channelConfig(1, flags, { anthropic_beta: { add: ['a'] } })).toEqual({})
  })

  it('flags are checked as the server does', () => {
    for (const ok of ['context-1m-2025-08-07', 'a', '-', 'x'.repeat(64)]) expect(isValidBetaFlag(ok), ok).toBe(true)
    for (const bad of ['', 'Upper', 'a,b', 'a b', 'x*', '*', 'a_b', 'x'.repeat(65)]) expect(isValidBetaFlag(bad), bad).toBe(false)
    for (const ok of ['context-management-2025-06-27', 'context-*', '*', `${'x'.repeat(64)}*`]) expect(isValidBetaRemoval(ok), ok).toBe(true)
    for (const bad of ['', '**', 'a*b', '*a', 'A*', `${'x'.repeat(65)}*`]) expect(isValidBetaRemoval(bad), bad).toBe(false)
  })
})

describe('provider switches in the config', () => {
  const previous = { web_search: true, code_execution: true, plugin: { web: {} }, knowledge_id: 'kb', knowledge_template: 't', custom_key: 1 }

  it('keeps the switches the type supports when on, and leaves off ones out', () => {
    expect(channelConfig(14, { ...form, web_search: true, code_execution: true }, null, ['web_search', 'code_execution'])).toEqual({
      web_search: true,
      code_execution: true,
    })
    expect(channelConfig(14, { ...form, web_search: true }, { code_execution: true }, ['web_search', 'code_execution'])).toEqual({
      web_search: true,
    })
    expect(
      channelConfig(20, { ...form, plugin: '{"file-parser": {"pdf": {"engine": "pdf-text"}}}' }, null, ['web_search', 'plugin']),
    ).toEqual({ plugin: { 'file-parser': { pdf: { engine: 'pdf-text' } } } })
    expect(channelConfig(20, { ...form, plugin: '{}' }, { plugin: { web: {} } }, ['web_search', 'plugin'])).toEqual({})
    expect(
      channelConfig(16, { ...form, knowledge_id: 'kb-1', knowledge_template: 'K {{knowledge}} Q {{question}}' }, null, [
        'web_search',
        'knowledge_id',
        'knowledge_template',
      ]),
    ).toEqual({ knowledge_id: 'kb-1', knowledge_template: 'K {{knowledge}} Q {{question}}' })
  })

  it('drops the switches the (new) type lacks, and keeps them as they were while the list is unknown', () => {
    const on = { ...form, web_search: true, code_execution: true, plugin: '{"web": {}}', knowledge_id: 'kb', knowledge_template: 't' }
    expect(channelConfig(17, on, previous, ['web_search'])).toEqual({ web_search: true, custom_key: 1 })
    expect(channelConfig(1, on, previous, [])).toEqual({ custom_key: 1 })
    expect(channelConfig(1, form, previous)).toEqual(previous)
  })
})

describe('prefix/suffix handling of fetched models', () => {
  it('offers shortened names mapped to the upstream ids', () => {
    expect(shortenFetchedModels(['openai/gpt-4o', 'openai/o3', 'mistral/large', 'openai/'], 'openai/', 'prefix')).toEqual({
      models: ['gpt-4o', 'o3', 'mistral/large', 'openai/'],
      mapping: { 'gpt-4o': 'openai/gpt-4o', o3: 'openai/o3' },
    })
    // llama-3 is an upstream model of its own: llama-3:free keeps its name.
    expect(shortenFetchedModels(['llama-3:free', 'llama-3', 'qwen:free'], ':free', 'suffix')).toEqual({
      models: ['llama-3:free', 'llama-3', 'qwen'],
      mapping: { qwen: 'qwen:free' },
    })
    expect(shortenFetchedModels(['a', 'b'], '', 'prefix')).toEqual({ models: ['a', 'b'], mapping: {} })
  })

  it('merges the mapping without replacing what is there', () => {
    expect(mergeMapping('', { a: 'x/a' })).toBe('{\n  "a": "x/a"\n}')
    expect(JSON.parse(mergeMapping('{"a":"mine"}', { a: 'x/a', b: 'x/b' }) ?? '')).toEqual({ a: 'mine', b: 'x/b' })
    expect(mergeMapping('{oops', { a: 'x/a' })).toBeNull()
    expect(mergeMapping('', {})).toBe('')
  })
})
