import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import zhCN from '../../public/locales/zh_CN/errors.json'

/** Every `.rs` file below `dir`. */
function rustFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return rustFiles(path)
    return name.endsWith('.rs') ? [path] : []
  })
}

/**
 * The stable codes the management API can refuse with, read from the server's sources: the
 * `ApiError` constructors that take a code, the fixed ones (`unauthorized`, `not_found`,
 * `conflict`), the domain's validation codes and its coded refusals.
 */
function serverCodes(): Set<string> {
  const crates = join(process.cwd(), '..', 'crates')
  const codes = new Set<string>()
  for (const file of [...rustFiles(join(crates, 'api', 'src')), ...rustFiles(join(crates, 'domain', 'src'))]) {
    const src = readFileSync(file, 'utf8')
    for (const m of src.matchAll(/ApiError::(?:bad_request|forbidden|conflict)\(\s*"([a-z0-9_]+)"/g)) codes.add(m[1]!)
    for (const m of src.matchAll(/ApiError::new\(\s*StatusCode::\w+,\s*"([a-z0-9_]+)"/g)) codes.add(m[1]!)
    for (const m of src.matchAll(/invalid_coded\(\s*"([a-z0-9_]+)"/g)) codes.add(m[1]!)
    if (src.includes('ApiError::unauthorized(')) codes.add('unauthorized')
    if (src.includes('ApiError::not_found(')) codes.add('not_found')
  }
  const domain = readFileSync(join(crates, 'domain', 'src', 'error.rs'), 'utf8')
  const codeFn = domain.slice(domain.indexOf('pub fn code'))
  for (const m of codeFn.slice(0, codeFn.indexOf('\n    }\n')).matchAll(/=> "([a-z0-9_]+)"/g)) codes.add(m[1]!)
  return codes
}

describe('server error codes', () => {
  it('are read from the sources (the extraction finds the known ones)', () => {
    const codes = serverCodes()
    expect(codes.size).toBeGreaterThan(60)
    for (const known of ['invalid_credentials', 'group_in_use', 'token_exhausted', 'required', 'unauthorized', 'invalid_voice_mapping']) {
      expect(codes).toContain(known)
    }
  })

  it('every one has a translation, so no English server sentence reaches the Chinese console', () => {
    const translated = new Set(Object.keys(zhCN.codes))
    const missing = [...serverCodes()].filter((c) => !translated.has(c)).sort()
    expect(missing).toEqual([])
  })
})
