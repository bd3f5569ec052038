import type { TFunction } from 'i18next'
import { z } from 'zod'

export const USERNAME_MIN = 3
export const USERNAME_MAX = 64
export const PASSWORD_MIN = 8
export const PASSWORD_MAX_BYTES = 72
/** Seconds before another e-mail may be asked for. */
export const RESEND_SECONDS = 60

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const isEmail = (s: string) => EMAIL.test(s)

/** POST /api/user/register. */
export interface RegisterPayload {
  username: string
  password: string
  email: string
  verification_code: string
  aff_code: string
}

export interface RegisterFormValues {
  username: string
  password: string
  confirm: string
  email: string
  verification_code: string
}

/**
 * Register (spec section 5): username (3-64), password (8+), matching confirmation; with e-mail
 * verification on, a valid e-mail and the code are required too.
 */
export function createRegisterSchema(t: TFunction, emailVerification: boolean, affCode: string) {
  return z
    .object({
      username: z
        .string()
        .trim()
        .min(1, t('public:validation.usernameRequired'))
        .min(USERNAME_MIN, t('public:validation.usernameTooShort', { min: USERNAME_MIN }))
        .max(USERNAME_MAX, t('public:validation.usernameTooLong', { max: USERNAME_MAX })),
      password: z
        .string()
        .min(1, t('public:validation.passwordRequired'))
        .min(PASSWORD_MIN, t('public:validation.passwordTooShort', { min: PASSWORD_MIN }))
        .refine(
          (p) => new TextEncoder().encode(p).length <= PASSWORD_MAX_BYTES,
          t('public:validation.passwordTooLong', { max: PASSWORD_MAX_BYTES }),
        ),
      confirm: z.string(),
      email: z.string().trim(),
      verification_code: z.string().trim(),
    })
    .superRefine((v, ctx) => {
      if (v.confirm !== v.password) {
        ctx.addIssue({ code: 'custom', path: ['confirm'], message: t('public:validation.mismatch') })
      }
      if (emailVerification && !v.email) {
        ctx.addIssue({ code: 'custom', path: ['email'], message: t('public:validation.emailRequired') })
      } else if (v.email && !isEmail(v.email)) {
        ctx.addIssue({ code: 'custom', path: ['email'], message: t('public:validation.emailInvalid') })
      }
      if (emailVerification && !v.verification_code) {
        ctx.addIssue({ code: 'custom', path: ['verification_code'], message: t('public:validation.codeRequired') })
      }
    })
    .transform(
      (v): RegisterPayload => ({
        username: v.username,
        password: v.password,
        email: v.email,
        verification_code: emailVerification ? v.verification_code : '',
        aff_code: affCode,
      }),
    )
}

/** The reset request: one valid e-mail address. */
export function createEmailSchema(t: TFunction) {
  return z.object({
    email: z
      .string()
      .trim()
      .min(1, t('public:validation.emailRequired'))
      .refine(isEmail, t('public:validation.emailInvalid')),
  })
}
