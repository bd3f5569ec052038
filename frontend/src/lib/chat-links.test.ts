import { describe, expect, it } from 'vitest'
import { fillChatLink, isChatLinkScheme, isJumpable, isWebLink, matchesChatLink, parseChatLinks, serverAddress } from './chat-links'

const DEFAULTS = [
  { name: 'ChatGPT Next', url: 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{server}"}', show: true, sort: 1 },
  { name: 'OpenCat', url: 'opencat://team/join?domain={server}&token={key}', show: false, sort: 4 },
  { name: 'AMA', url: 'ama://set-api-key?server={server}&key={key}', show: true, sort: 3 },
]

describe('chat links', () => {
  it('keeps well-formed shown entries in sort order', () => {
    const links = parseChatLinks([...DEFAULTS, { name: '', url: 'https://x' }, 'junk', { name: 'no url' }])
    expect(links.map((l) => l.name)).toEqual(['ChatGPT Next', 'AMA'])
    expect(parseChatLinks(DEFAULTS, { includeHidden: true }).map((l) => l.name)).toEqual(['ChatGPT Next', 'AMA', 'OpenCat'])
    expect(parseChatLinks('not a list')).toEqual([])
  })

  it('accepts web links and the built-in clients\' schemes only, as the server does', () => {
    for (const l of DEFAULTS) expect(isChatLinkScheme(l.url)).toBe(true)
    expect(isChatLinkScheme('HTTPS://chat.example/')).toBe(true)
    for (const bad of ['javascript:alert(1)', ' JavaScript:alert(1)', 'data:text/html,x', 'vbscript:x', '//evil.example/', 'chat.example', '']) {
      expect(isChatLinkScheme(bad)).toBe(false)
    }
  })

  it('fills {key} and {server} everywhere they appear', () => {
    expect(fillChatLink(DEFAULTS[0]!.url, 'sk-abc', 'https://api.example.com')).toBe(
      'https://app.nextchat.dev/#/?settings={"key":"sk-abc","url":"https://api.example.com"}',
    )
    expect(fillChatLink('{key}/{key}@{server}', 'k', 's')).toBe('k/k@s')
  })

  it('uses the configured server address, else this origin, without a trailing slash', () => {
    expect(serverAddress('https://api.example.com/', 'http://localhost:3000')).toBe('https://api.example.com')
    expect(serverAddress('  ', 'http://localhost:3000')).toBe('http://localhost:3000')
  })

  it('never jumps to script or data URLs, and knows app schemes from web links', () => {
    expect(isJumpable('javascript:alert(1)')).toBe(false)
    expect(isJumpable(' JavaScript:alert(1)')).toBe(false)
    expect(isJumpable('data:text/html,hi')).toBe(false)
    expect(isJumpable('relative/path')).toBe(false)
    expect(isJumpable('opencat://team/join')).toBe(true)
    expect(isWebLink('https://x.dev')).toBe(true)
    expect(isWebLink('ama://x')).toBe(false)
  })

  it('recognises the destinations of the configured chat links only', () => {
    const links = parseChatLinks(DEFAULTS, { includeHidden: true })
    expect(matchesChatLink('opencat://team/join?domain=a&token=b', links)).toBe(true)
    expect(matchesChatLink('https://app.nextchat.dev/#/?settings=x', links)).toBe(true)
    expect(matchesChatLink('https://evil.example/phish', links)).toBe(false)
    expect(matchesChatLink('javascript:alert(1)', links)).toBe(false)
  })
})
