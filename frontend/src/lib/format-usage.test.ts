import { describe, expect, it } from 'vitest'
import { formatBytes, formatDay, usageLevel, usagePercent } from './format'

describe('usage and size formatting', () => {
  it('computes the used share and its colour (spec sections 4 and 9)', () => {
    expect(usagePercent(60, 40)).toBe(60)
    expect(usagePercent(5, -10)).toBe(0)
    expect(usageLevel(usagePercent(59, 41))).toBe('green')
    expect(usageLevel(usagePercent(84, 16))).toBe('orange')
    expect(usageLevel(usagePercent(1, 0))).toBe('red')
  })

  it('formats UTC days and byte counts', () => {
    expect(formatDay(1_735_689_600)).toBe('01-01')
    expect(formatBytes(512)).toBe('512 B')
    expect(formatBytes(1536)).toBe('1.5 KiB')
    expect(formatBytes(8 * 1024 ** 3)).toBe('8.0 GiB')
  })
})
