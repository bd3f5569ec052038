import { toast } from 'sonner'

/** Toast durations in ms (spec section 9). */
export const TOAST_DURATION = {
  error: 5_000,
  warning: 10_000,
  success: 1_500,
  info: 3_000,
  notice: 20_000,
} as const

/**
 * The only way the app shows a toast. The message doubles as the toast id, so the same
 * message is never stacked twice: a repeat replaces (and restarts) the visible one.
 */
export const notify = {
  error: (message: string) => toast.error(message, { id: message, duration: TOAST_DURATION.error }),
  warning: (message: string) =>
    toast.warning(message, { id: message, duration: TOAST_DURATION.warning }),
  success: (message: string) =>
    toast.success(message, { id: message, duration: TOAST_DURATION.success }),
  info: (message: string) => toast.info(message, { id: message, duration: TOAST_DURATION.info }),
  notice: (message: string) => toast(message, { id: message, duration: TOAST_DURATION.notice }),
}
