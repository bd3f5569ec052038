import { clearUser } from '@/stores/session'
import type errors from '../../public/locales/zh_CN/errors.json'
import i18n from './i18n'
import { notify } from './toast'

/**
 * The one place that turns errors into toasts (spec section 8). Components never toast an
 * error themselves: queries and mutations reach this through the query client.
 */
export function handleApiError(error: unknown): void {
  // Structural check (not instanceof) so this module does not import api.ts back.
  const status = httpStatusOf(error)
  if (status !== undefined) {
    switch (status) {
      case 429: {
        // A refusal the console can name (e.g. too many unpaid orders) says so; else rate limiting.
        const code = errorCodeOf(error)
        notify.error(
          code && isTranslatedCode(code)
            ? i18n.t('errors:withMessage', { message: i18n.t(`errors:codes.${code}`) })
            : i18n.t('errors:http.tooManyRequests'),
        )
        return
      }
      case 500:
        notify.error(i18n.t('errors:http.serverError'))
        return
      case 405:
        notify.info(i18n.t('errors:http.demoSite'))
        return
      default:
        notify.error(i18n.t('errors:withMessage', { message: messageOf(error) }))
        return
    }
  }
  notify.error(i18n.t('errors:withMessage', { message: messageOf(error) }))
}

/** A 401 from any call: forget the user, in localStorage and in app state. */
export function handleUnauthorized(): void {
  clearUser('unauthorized')
}

export function httpStatusOf(error: unknown): number | undefined {
  if (typeof error === 'object' && error !== null && 'status' in error) {
    const { status } = error as { status: unknown }
    if (typeof status === 'number') return status
  }
  return undefined
}

/** The stable `code` of a server refusal (`{success: false, message, code}`), if it sent one. */
export function errorCodeOf(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const { code } = error as { code: unknown }
    if (typeof code === 'string' && code) return code
  }
  return undefined
}

/** The server's error codes the console translates (`errors:codes.*`, zh_CN the reference). */
type TranslatedCode = keyof (typeof errors)['codes']

function isTranslatedCode(code: string): code is TranslatedCode {
  return /^[a-z0-9_]+$/.test(code) && i18n.exists(`errors:codes.${code}`)
}

/**
 * What went wrong, for a screen to show in place (an error state, not a toast): the translated
 * code, else the server's message, else the error's text.
 */
export function errorText(error: unknown): string {
  return messageOf(error)
}

/**
 * The translation of the server's stable error code (`errors:codes.<code>`) when the console
 * has one, else the server's message, else the error's own text.
 */
function messageOf(error: unknown): string {
  const code = errorCodeOf(error)
  // A code whose message names the upstream's answer (`{{detail}}`) gets the server's message.
  const detail = error instanceof Error ? error.message : ''
  if (code && isTranslatedCode(code)) return i18n.t(`errors:codes.${code}`, { detail })
  if (error instanceof Error) return error.message || i18n.t('errors:unknown')
  if (typeof error === 'string' && error) return error
  return i18n.t('errors:unknown')
}
