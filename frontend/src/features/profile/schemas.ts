import type { TFunction } from 'i18next'
import { z } from 'zod'

export const USERNAME_MIN = 3
export const USERNAME_MAX = 64
export const DISPLAY_NAME_MAX = 64
export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 72

/** PUT /api/user/self: any of the fields; a new password needs the current one. */
export interface UpdateSelfPayload {
  username?: string
  display_name?: string
  password?: string
  original_password?: string
}

/** Personal information (spec section 5: username required, at least 3 characters). */
export function createInfoSchema(t: TFunction) {
  return z.object({
    username: z
      .string()
      .trim()
      .min(1, t('profile:validation.usernameRequired'))
      .min(USERNAME_MIN, t('profile:validation.usernameTooShort', { min: USERNAME_MIN }))
      .max(USERNAME_MAX, t('profile:validation.usernameTooLong', { max: USERNAME_MAX })),
    display_name: z
      .string()
      .trim()
      .max(DISPLAY_NAME_MAX, t('profile:validation.displayNameTooLong', { max: DISPLAY_NAME_MAX })),
  })
}
export type InfoValues = z.input<ReturnType<typeof createInfoSchema>>

/** Password change (spec section 5: at least 8 characters; the two entries must match). */
export function createPasswordSchema(t: TFunction) {
  return z
    .object({
      original_password: z.string().min(1, t('profile:validation.originalRequired')),
      password: z
        .string()
        .min(PASSWORD_MIN, t('profile:validation.passwordTooShort', { min: PASSWORD_MIN }))
        .refine((p) => new TextEncoder().encode(p).length <= PASSWORD_MAX, t('profile:validation.passwordTooLong', { max: PASSWORD_MAX })),
      confirm: z.string(),
    })
    .refine((v) => v.password === v.confirm, { path: ['confirm'], message: t('profile:validation.mismatch') })
    .transform((v): UpdateSelfPayload => ({ password: v.password, original_password: v.original_password }))
}
export type PasswordValues = z.input<ReturnType<typeof createPasswordSchema>>
