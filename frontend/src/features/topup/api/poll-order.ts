import { useEffect, useRef } from 'react'
import { ApiError } from '@/lib/api'
import { httpStatusOf } from '@/lib/errors'
import { getOrderStatus } from './get-order-status'

/** How often a pending order is asked about, and for how long. */
export const POLL_INTERVAL_MS = 3_000
export const POLL_TIMEOUT_MS = 10 * 60_000

export type PollOutcome =
  | { kind: 'paid' | 'paid_late' | 'expired' | 'failed'; quota: number }
  /** Still pending after POLL_TIMEOUT_MS: polling stopped. */
  | { kind: 'timeout' }
  /** The server refused the question (e.g. the order is not this user's). */
  | { kind: 'error'; error: unknown }

/**
 * Asks GET /api/user/order/status every 3 s while the order is pending (first at once with
 * `immediate`, e.g. back from the gateway's page), and reports once when it is settled, refused,
 * or still pending after 10 minutes. Stops when `tradeNo` changes or the screen unmounts. A
 * network error or a 5xx is retried at the next beat.
 */
export function useOrderPolling(
  tradeNo: string | null,
  onOutcome: (outcome: PollOutcome) => void,
  { immediate = false }: { immediate?: boolean } = {},
) {
  const report = useRef(onOutcome)
  useEffect(() => {
    report.current = onOutcome
  })

  useEffect(() => {
    if (!tradeNo) return
    const controller = new AbortController()
    const deadline = Date.now() + POLL_TIMEOUT_MS
    let timer: number | undefined

    const schedule = () => {
      if (Date.now() >= deadline) {
        report.current({ kind: 'timeout' })
        return
      }
      timer = window.setTimeout(() => void tick(), POLL_INTERVAL_MS)
    }

    const tick = async () => {
      try {
        const state = await getOrderStatus(tradeNo, controller.signal)
        if (controller.signal.aborted) return
        if (state.status !== 'pending') {
          report.current({ kind: state.status, quota: state.quota })
        } else {
          schedule()
        }
      } catch (error) {
        if (controller.signal.aborted) return
        const status = httpStatusOf(error)
        if (error instanceof ApiError || (status !== undefined && status < 500)) {
          report.current({ kind: 'error', error })
        } else {
          schedule()
        }
      }
    }

    if (immediate) void tick()
    else schedule()
    return () => {
      controller.abort()
      window.clearTimeout(timer)
    }
  }, [tradeNo, immediate])
}
