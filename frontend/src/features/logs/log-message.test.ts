import i18n from 'i18next'
import { beforeAll, describe, expect, it } from 'vitest'
import { formatTimestamp } from '@/lib/format'
import { LOG_EVENTS, logMessage } from './log-message'

const display = { displayInCurrency: true, quotaPerUnit: 500_000 }
const t = i18n.t.bind(i18n)
const msg = (metadata: unknown, quota = 0, content = 'english text') => logMessage({ metadata, quota, content }, t, display)

beforeAll(async () => {
  await i18n.changeLanguage('zh_CN')
})

describe('log messages in the reader language', () => {
  it('words every event the server names, with amounts as money', () => {
    expect(msg({ event: 'redeemed', name: 'promo' }, 1_000_000)).toBe('使用兑换码“promo”充值 $2.00')
    expect(msg({ event: 'redemptions_created', name: 'gift', count: 3, quota: 50 })).toBe('创建了 3 个兑换码“gift”，每个 $0.0001')
    expect(msg({ event: 'invite_reward', invitee: 'bob' }, 500_000)).toBe('邀请新用户 bob，获得奖励 $1.00')
    expect(msg({ event: 'signup_grant' }, 250_000)).toBe('注册赠送 $0.50')
    expect(msg({ event: 'user_created', operator: 'root', remark: '' }, 0)).toBe('由管理员 root 创建，初始额度 $0.00')
    expect(msg({ event: 'user_deleted', operator: 'root' })).toBe('被管理员 root 删除')
    expect(msg({ event: 'user_enabled', operator: 'root' })).toBe('被管理员 root 启用')
    expect(msg({ event: 'user_disabled', operator: 'root' })).toBe('被管理员 root 禁用')
    expect(msg({ event: 'user_promoted', operator: 'root' })).toBe('被管理员 root 设为管理员')
    expect(msg({ event: 'user_demoted', operator: 'root' })).toBe('被管理员 root 取消管理员')
    expect(msg({ event: 'quota_changed', operator: 'root', remark: 'gift' }, 1000)).toBe('管理员 root 增加额度 $0.002（备注：gift）')
    expect(msg({ event: 'quota_changed', operator: 'root', remark: '' }, -500_000)).toBe('管理员 root 扣减额度 $1.00')
    expect(msg({ event: 'logs_deleted', count: 12, before: 1_700_000_000 })).toBe(`删除了 ${formatTimestamp(1_700_000_000)} 之前的 12 条日志`)
    expect(msg({ event: 'group_promoted', from: 'default', to: 'vip', total_topup: 5_000_000 })).toBe('累计充值 $10.00，自动从分组 default 升级到 vip')
    expect(msg({ event: 'task_refund', platform: 'suno', task_id: 't-1', reason: 'busy' }, 500_000)).toBe('suno 任务 t-1 失败，退还 $1.00：busy')
  })

  it('has a wording for each event in the list (none falls back to English)', () => {
    for (const event of LOG_EVENTS) {
      expect(msg({ event, operator: 'x' }), event).not.toBe('english text')
    }
  })

  it('keeps the stored text for consume logs, unknown events and old rows', () => {
    expect(msg({ group_ratio: 1 })).toBe('english text')
    expect(msg({ event: 'something_new' })).toBe('english text')
    expect(msg(null)).toBe('english text')
    expect(msg('{"event":"redeemed","name":"x"}', 500_000)).toBe('使用兑换码“x”充值 $1.00')
  })
})
