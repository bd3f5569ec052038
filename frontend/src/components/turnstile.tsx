import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react'
import { useSiteInfo } from '@/stores/site'

/** Cloudflare's widget script (explicit rendering); the server's CSP admits it while the check is on. */
export const TURNSTILE_SCRIPT = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit'

interface TurnstileApi {
  render: (
    container: HTMLElement,
    options: {
      sitekey: string
      callback: (token: string) => void
      'expired-callback': () => void
      'error-callback': () => void
    },
  ) => string
  reset: (widgetId: string) => void
  remove: (widgetId: string) => void
}

declare global {
  interface Window {
    turnstile?: TurnstileApi
  }
}

let loading: Promise<TurnstileApi> | null = null

/** Loads Cloudflare's script once per page. */
function loadTurnstile(): Promise<TurnstileApi> {
  if (window.turnstile) return Promise.resolve(window.turnstile)
  loading ??= new Promise<TurnstileApi>((resolve, reject) => {
    const script = document.createElement('script')
    script.src = TURNSTILE_SCRIPT
    script.async = true
    script.onload = () => (window.turnstile ? resolve(window.turnstile) : reject(new Error('turnstile missing')))
    script.onerror = () => {
      loading = null
      reject(new Error('turnstile script failed to load'))
    }
    document.head.appendChild(script)
  })
  return loading
}

interface WidgetProps {
  siteKey: string
  /** The current token; empty when it expired or failed. */
  onToken: (token: string) => void
  /** Bumped to ask for a fresh token (a token is good for one request). */
  generation: number
}

function TurnstileWidget({ siteKey, onToken, generation }: WidgetProps) {
  const container = useRef<HTMLDivElement>(null)
  const widget = useRef<{ api: TurnstileApi; id: string } | null>(null)
  const tokenCallback = useRef(onToken)
  useEffect(() => {
    tokenCallback.current = onToken
  }, [onToken])

  useEffect(() => {
    let cancelled = false
    loadTurnstile()
      .then((api) => {
        if (cancelled || !container.current) return
        const id = api.render(container.current, {
          sitekey: siteKey,
          callback: (token) => tokenCallback.current(token),
          'expired-callback': () => tokenCallback.current(''),
          'error-callback': () => tokenCallback.current(''),
        })
        widget.current = { api, id }
      })
      .catch(() => tokenCallback.current(''))
    return () => {
      cancelled = true
      if (widget.current) widget.current.api.remove(widget.current.id)
      widget.current = null
    }
  }, [siteKey])

  useEffect(() => {
    if (generation > 0 && widget.current) widget.current.api.reset(widget.current.id)
  }, [generation])

  return <div ref={container} className="flex min-h-[65px] justify-center" data-testid="turnstile-widget" />
}

export interface Turnstile {
  /** The site asks for the check (`turnstile_check` with a site key in /api/status). */
  enabled: boolean
  /** A token is at hand, or none is needed. */
  ready: boolean
  /** The widget to place in the form (null when the check is off). */
  widget: ReactNode
  /** The token for one request (undefined when the check is off); the widget then fetches a fresh one. */
  take: () => string | undefined
}

/**
 * Cloudflare Turnstile for the public forms (login, registration, verification and reset
 * e-mails): the server verifies the token sent as `?turnstile=` when the check is on.
 */
export function useTurnstile(): Turnstile {
  const { turnstile_check, turnstile_site_key } = useSiteInfo()
  const enabled = turnstile_check && turnstile_site_key !== ''
  const [token, setToken] = useState('')
  const [generation, setGeneration] = useState(0)
  const take = useCallback(() => {
    if (!enabled) return undefined
    setToken('')
    setGeneration((g) => g + 1)
    return token
  }, [enabled, token])
  return {
    enabled,
    ready: !enabled || token !== '',
    widget: enabled ? <TurnstileWidget siteKey={turnstile_site_key} onToken={setToken} generation={generation} /> : null,
    take,
  }
}
