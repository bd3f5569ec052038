import { describe, expect, it } from 'vitest'
import { discountOff, formatFees, formatMoney, formatPercent } from './money'

describe('money', () => {
  it('shows an amount in its currency with two decimals', () => {
    expect(formatMoney('69.35', 'CNY')).toBe('¥69.35')
    expect(formatMoney(10, 'USD')).toBe('$10.00')
    expect(formatMoney('3.5', 'EUR')).toBe('3.50 EUR')
    expect(formatMoney('oops', 'USD')).toBe('$oops')
  })

  it('shows fractions as percentages without float noise', () => {
    expect(formatPercent(0.05)).toBe('5%')
    expect(formatPercent(0.0125)).toBe('1.25%')
    expect(formatPercent(0.07)).toBe('7%')
  })

  it('shows a discount factor as the share taken off, and none at 1', () => {
    expect(discountOff(0.9)).toBe('10%')
    expect(discountOff(0.85)).toBe('15%')
    expect(discountOff(1)).toBeUndefined()
    expect(discountOff(0)).toBeUndefined()
  })

  it('puts a gateway\'s fees on one line', () => {
    expect(formatFees({ percent_fee: 0.05, fixed_fee: 0.3 })).toBe('5% + $0.30')
    expect(formatFees({ percent_fee: 0.05, fixed_fee: 0 })).toBe('5%')
    expect(formatFees({ percent_fee: 0, fixed_fee: 0.3 })).toBe('$0.30')
    expect(formatFees({ percent_fee: 0, fixed_fee: 0 })).toBeUndefined()
  })
})
