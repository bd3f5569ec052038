import { useCallback, useEffect, useState } from 'react'

/** Seconds left before an action may run again; `start()` begins a new wait. */
export function useCountdown(seconds: number) {
  const [left, setLeft] = useState(0)
  useEffect(() => {
    if (left <= 0) return
    const id = window.setTimeout(() => setLeft((n) => n - 1), 1000)
    return () => window.clearTimeout(id)
  }, [left])
  const start = useCallback(() => setLeft(seconds), [seconds])
  return { left, start }
}
