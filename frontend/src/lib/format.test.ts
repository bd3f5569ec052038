import { describe, expect, it } from 'vitest'
import { formatTimestamp, renderNumber, renderQuota } from './format'

describe('renderNumber', () => {
  it('keeps figures under 1e4 as they are', () => {
    expect(renderNumber(0)).toBe('0')
    expect(renderNumber(999)).toBe('999')
    expect(renderNumber(9999)).toBe('9999')
  })

  it('abbreviates 1e4 and more as k', () => {
    expect(renderNumber(10_000)).toBe('10.0k')
    expect(renderNumber(123_456)).toBe('123.5k')
    expect(renderNumber(999_949)).toBe('999.9k')
  })

  it('abbreviates 1e6 and more as M', () => {
    expect(renderNumber(1_000_000)).toBe('1.0M')
    expect(renderNumber(25_000_000)).toBe('25.0M')
  })

  it('abbreviates 1e9 and more as B', () => {
    expect(renderNumber(1_000_000_000)).toBe('1.0B')
    expect(renderNumber(3_450_000_000)).toBe('3.5B')
  })

  it('abbreviates negative figures the same way', () => {
    expect(renderNumber(-20_000)).toBe('-20.0k')
  })
})

describe('renderQuota', () => {
  it('shows dollars with 2 decimals in currency mode', () => {
    expect(renderQuota(500_000, { displayInCurrency: true, quotaPerUnit: 500_000 })).toBe('$1.00')
    expect(renderQuota(250_000_000, { displayInCurrency: true, quotaPerUnit: 500_000 })).toBe('$500.00')
    expect(renderQuota(1234, { displayInCurrency: true, quotaPerUnit: 500_000 })).toBe('$0.00')
    expect(renderQuota(0, { displayInCurrency: true, quotaPerUnit: 500_000 })).toBe('$0.00')
  })

  it('uses the site quota_per_unit, defaulting to 500000', () => {
    expect(renderQuota(1_000, { displayInCurrency: true, quotaPerUnit: 1_000 })).toBe('$1.00')
    expect(renderQuota(750_000, { displayInCurrency: true })).toBe('$1.50')
    expect(renderQuota(750_000, { displayInCurrency: true, quotaPerUnit: 0 })).toBe('$1.50')
  })

  it('abbreviates the raw figure otherwise', () => {
    expect(renderQuota(9_999, { displayInCurrency: false })).toBe('9999')
    expect(renderQuota(250_000_000, { displayInCurrency: false })).toBe('250.0M')
    expect(renderQuota(2_000_000_000, { displayInCurrency: false })).toBe('2.0B')
  })
})

describe('formatTimestamp', () => {
  it('formats unix seconds as YYYY-MM-DD HH:mm:ss (local time)', () => {
    const d = new Date(2024, 0, 2, 3, 4, 5)
    expect(formatTimestamp(d.getTime() / 1000)).toBe('2024-01-02 03:04:05')
  })
})
