import type { TFunction } from 'i18next'
import { z } from 'zod'

/** Login form (spec section 5: username or e-mail and password required). */
export function createLoginSchema(t: TFunction) {
  return z.object({
    username: z.string().trim().min(1, t('auth:validation.usernameRequired')),
    // Passwords are sent as typed: trimming would silently change a secret.
    password: z.string().min(1, t('auth:validation.passwordRequired')),
  })
}

export type LoginFormValues = z.input<ReturnType<typeof createLoginSchema>>
export type LoginPayload = z.output<ReturnType<typeof createLoginSchema>>
