import { toast } from 'sonner'
import i18n from './i18n'

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

/** Saves `text` as a file in the browser's downloads. */
export function downloadText(text: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }))
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.appendChild(a)
  a.click()
  a.remove()
  URL.revokeObjectURL(url)
}

/**
 * The copy toast (spec section 9): "copied", persistent until closed, with a download button
 * that saves what was copied (a key one would rather not lose). One at a time.
 */
export function notifyCopied(text: string, filename = 'copied.txt'): void {
  toast.success(i18n.t('common:copy.success'), {
    id: 'copied',
    duration: Infinity,
    action: { label: i18n.t('common:copy.download'), onClick: () => downloadText(text, filename) },
  })
}
