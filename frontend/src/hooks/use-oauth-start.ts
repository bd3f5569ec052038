import { useMutation } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { startOAuth, type RedirectProvider } from '@/lib/oauth'

/**
 * Starting a third-party sign-in or binding: fetch the authorize URL, then leave for it (Lark:
 * a new window). `working` names the provider being started, and stays set while this page is
 * leaving, so a second click cannot start another; coming back through the browser's history
 * (a page restored from the back-forward cache) frees the buttons again. A failure is shown
 * by the central error handler.
 */
export function useOAuthStart() {
  const [leaving, setLeaving] = useState<RedirectProvider | null>(null)
  // Set at the click itself: the mutation's pending state reaches the screen a tick later.
  const locked = useRef(false)
  const mutation = useMutation({
    mutationFn: startOAuth,
    onSuccess: (how, provider) => {
      if (how === 'redirected') setLeaving(provider)
    },
  })

  useEffect(() => {
    const onShow = (event: PageTransitionEvent) => {
      if (!event.persisted) return
      locked.current = false
      setLeaving(null)
    }
    window.addEventListener('pageshow', onShow)
    return () => window.removeEventListener('pageshow', onShow)
  }, [])

  const working: RedirectProvider | null = mutation.isPending ? (mutation.variables ?? null) : leaving
  const { mutate } = mutation
  const start = (provider: RedirectProvider) => {
    if (locked.current || working !== null) return
    locked.current = true
    mutate(provider, {
      onSettled: (how) => {
        if (how !== 'redirected') locked.current = false
      },
    })
  }
  return { start, working }
}
