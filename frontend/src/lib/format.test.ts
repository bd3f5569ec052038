import { describe, expect, it } from 'vitest'
import {
  dollarsToQuota,
  formatAmount,
  formatDuration,
  formatTimestamp,
  parseQuotaText,
  quotaText,
  quotaToDollars,
  renderNumber,
  renderQuota,
} from './format'

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
    expect(renderQuota(0, { displayInCurrency: true, quotaPerUnit: 500_000 })).toBe('$0.00')
  })

  it('never shows a cost that is not zero as $0.00: small amounts to 6 significant digits', () => {
    const d = { displayInCurrency: true, quotaPerUnit: 500_000 }
    expect(renderQuota(50, d)).toBe('$0.0001')
    expect(renderQuota(1234, d)).toBe('$0.002468')
    expect(renderQuota(1, d)).toBe('$0.000002')
    expect(renderQuota(61_728, d)).toBe('$0.123456')
    expect(renderQuota(61_728_395, d)).toBe('$123.457')
    expect(renderQuota(-50, d)).toBe('$-0.0001')
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

describe('formatAmount', () => {
  it('keeps two decimals and adds what six significant digits need', () => {
    expect(formatAmount(12.5)).toBe('12.50')
    expect(formatAmount(0.0001)).toBe('0.0001')
    expect(formatAmount(0.000123456)).toBe('0.000123456')
    expect(formatAmount(0.0001234567)).toBe('0.000123457')
    expect(formatAmount(1234.56789)).toBe('1234.57')
    expect(formatAmount(987654321.123)).toBe('987654321.12')
    expect(formatAmount(0)).toBe('0.00')
  })

  it('takes a smaller number of significant digits', () => {
    expect(formatAmount(0.000123456, 3)).toBe('0.000123')
    expect(formatAmount(1.23456, 3)).toBe('1.23')
  })

  it('writes amounts too small for decimals in exponent form, never as zero', () => {
    expect(formatAmount(1.5e-13)).toBe('1.5e-13')
  })
})

describe('dollars and quota units', () => {
  it('converts with the site quota_per_unit, 500000 by default', () => {
    expect(quotaToDollars(250_000)).toBe(0.5)
    expect(quotaToDollars(1_000, 1_000)).toBe(1)
    expect(dollarsToQuota(1.5)).toBe(750_000)
    expect(dollarsToQuota(0.000001)).toBe(1)
    expect(dollarsToQuota(2, 0)).toBe(1_000_000)
  })
})

describe('formatDuration', () => {
  it('shows milliseconds under a second and seconds above', () => {
    expect(formatDuration(0)).toBe('0 ms')
    expect(formatDuration(850)).toBe('850 ms')
    expect(formatDuration(1250)).toBe('1.25 s')
    expect(formatDuration(12_345)).toBe('12.35 s')
  })
})

describe('quota fields in dollars or units', () => {
  const dollars = { dollars: true, perUnit: 500_000 }
  const units = { dollars: false, perUnit: 500_000 }
  it('shows a quota as the field types it', () => {
    expect(quotaText(1_000_000, dollars)).toBe('2')
    expect(quotaText(42, dollars)).toBe('0.000084')
    expect(quotaText(42, units)).toBe('42')
  })
  it('reads dollars (up to 6 decimals) or whole units, else NaN', () => {
    expect(parseQuotaText('2.5', dollars)).toBe(1_250_000)
    expect(parseQuotaText(' 0.000084 ', dollars)).toBe(42)
    expect(parseQuotaText('1.1234567', dollars)).toBeNaN()
    expect(parseQuotaText('-1', dollars)).toBeNaN()
    expect(parseQuotaText('1.5', units)).toBeNaN()
    expect(parseQuotaText('1500', units)).toBe(1500)
    expect(parseQuotaText('', units)).toBeNaN()
  })
})
