import { useEffect } from 'react'
import { useLocation } from 'react-router'

/** Scroll to the top on every route change (spec section 2.1). */
export function ScrollToTop() {
  const { pathname } = useLocation()
  useEffect(() => {
    window.scrollTo(0, 0)
  }, [pathname])
  return null
}
