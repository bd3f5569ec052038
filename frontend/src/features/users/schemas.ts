import type { TFunction } from 'i18next'
import { z } from 'zod'
import { parseQuotaText, UNITS, type QuotaUnit } from '@/lib/format'
import { ROLE } from '@/types/api'
import type { ManagedUser } from './types'

export const USERNAME_MIN = 3
export const USERNAME_MAX = 64
export const PASSWORD_MIN = 8
export const DISPLAY_NAME_MAX = 64
export const REMARK_MAX = 255

export interface UserFormValues {
  username: string
  password: string
  display_name: string
  email: string
  group: string
  /** Create only. */
  quota: string
  /** Create only: "1" user, "10" administrator (root only). */
  role: string
  /** Create only. */
  remark: string
}

/** Body of POST /api/user. */
export interface UserCreatePayload {
  username: string
  password: string
  display_name: string
  email: string
  group: string
  quota: number
  role: number
  remark: string
}

/** Fields of PUT /api/user (an empty password keeps the current one, so it is left out). */
export interface UserUpdatePayload {
  username: string
  display_name: string
  email: string
  group: string
  password?: string
}

export function userFormDefaults(user?: ManagedUser): UserFormValues {
  return {
    username: user?.username ?? '',
    password: '',
    display_name: user?.display_name ?? '',
    email: user?.email ?? '',
    group: user?.group ?? 'default',
    quota: '0',
    role: String(ROLE.user),
    remark: '',
  }
}

const EMAIL = /^[^\s@]+@[^\s@.][^\s@]*\.[^\s@]+$/

/**
 * User form (spec section 5): username, password and group required; username 3-64 letters,
 * digits, `_`, `-`, `.`; password at least 8 characters (optional when editing); quota a whole
 * number >= 0.
 */
export function createUserSchema(t: TFunction, editing: boolean, unit: QuotaUnit = UNITS) {
  return z
    .object({
      username: z
        .string()
        .trim()
        .min(1, t('users:validation.usernameRequired'))
        .min(USERNAME_MIN, t('users:validation.usernameTooShort', { min: USERNAME_MIN }))
        .max(USERNAME_MAX, t('users:validation.usernameTooLong', { max: USERNAME_MAX }))
        .regex(/^[\p{L}\p{N}_.-]+$/u, t('users:validation.usernameFormat')),
      password: z.string(),
      display_name: z
        .string()
        .trim()
        .max(DISPLAY_NAME_MAX, t('users:validation.displayNameTooLong', { max: DISPLAY_NAME_MAX })),
      email: z.string().trim(),
      group: z.string().trim().min(1, t('users:validation.groupRequired')),
      quota: z.string().trim(),
      role: z.string(),
      remark: z
        .string()
        .trim()
        .max(REMARK_MAX, t('users:validation.remarkTooLong', { max: REMARK_MAX })),
    })
    .superRefine((v, ctx) => {
      if (!editing && v.password === '') {
        ctx.addIssue({ code: 'custom', path: ['password'], message: t('users:validation.passwordRequired') })
      } else if (v.password !== '' && [...v.password].length < PASSWORD_MIN) {
        ctx.addIssue({
          code: 'custom',
          path: ['password'],
          message: t('users:validation.passwordTooShort', { min: PASSWORD_MIN }),
        })
      }
      if (v.email && !EMAIL.test(v.email)) {
        ctx.addIssue({ code: 'custom', path: ['email'], message: t('users:validation.emailInvalid') })
      }
      if (!editing && Number.isNaN(parseQuotaText(v.quota, unit))) {
        ctx.addIssue({
          code: 'custom',
          path: ['quota'],
          message: unit.dollars ? t('users:validation.quotaDollars') : t('users:validation.quotaInteger'),
        })
      }
    })
}

export type UserFormOutput = z.output<ReturnType<typeof createUserSchema>>

export function toCreatePayload(v: UserFormOutput, unit: QuotaUnit = UNITS): UserCreatePayload {
  return {
    username: v.username,
    password: v.password,
    display_name: v.display_name,
    email: v.email,
    group: v.group,
    quota: parseQuotaText(v.quota, unit),
    role: Number(v.role),
    remark: v.remark,
  }
}

export function toUpdatePayload(v: UserFormOutput): UserUpdatePayload {
  return {
    username: v.username,
    display_name: v.display_name,
    email: v.email,
    group: v.group,
    ...(v.password ? { password: v.password } : {}),
  }
}

export interface QuotaFormValues {
  amount: string
  remark: string
}

/** A signed quota change as typed (dollars or units, see [`parseQuotaText`]), in units; NaN when invalid. */
export function parseQuotaChange(text: string, unit: QuotaUnit = UNITS): number {
  const v = text.trim()
  const negative = v.startsWith('-')
  const amount = parseQuotaText(negative ? v.slice(1) : v, unit)
  return negative ? -amount : amount
}

/**
 * Quota change (spec section 5): a non-zero amount (negative deducts; dollars when the site
 * shows money) that cannot deduct more than the user's balance, with an optional remark.
 */
export function createQuotaSchema(t: TFunction, balance: number, unit: QuotaUnit = UNITS) {
  return z
    .object({
      amount: z.string().trim(),
      remark: z
        .string()
        .trim()
        .max(REMARK_MAX, t('users:validation.remarkTooLong', { max: REMARK_MAX })),
    })
    .superRefine((v, ctx) => {
      if (v.amount === '') {
        ctx.addIssue({ code: 'custom', path: ['amount'], message: t('users:validation.quotaChangeRequired') })
      } else if (Number.isNaN(parseQuotaChange(v.amount, unit)) || parseQuotaChange(v.amount, unit) === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['amount'],
          message: unit.dollars ? t('users:validation.quotaChangeDollars') : t('users:validation.quotaChangeInteger'),
        })
      } else if (parseQuotaChange(v.amount, unit) < 0 && -parseQuotaChange(v.amount, unit) > balance) {
        ctx.addIssue({ code: 'custom', path: ['amount'], message: t('users:validation.quotaChangeTooLarge') })
      }
    })
    .transform((v) => ({ quota: parseQuotaChange(v.amount, unit), remark: v.remark }))
}
