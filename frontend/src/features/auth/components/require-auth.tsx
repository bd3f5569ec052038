import { useState } from 'react'
import { Navigate, Outlet, useLocation } from 'react-router'
import { FullPageSpinner } from '@/components/full-page-spinner'
import { sessionStore, useSession } from '@/stores/session'
import { useSelf } from '../api/get-self'

/**
 * Guards the console: asks GET /api/user/self on entry and shows nothing protected until the
 * answer is known. No user (401 or any failure) -> /login; signed out from here -> /.
 */
export function RequireAuth() {
  const { user, endedBy } = useSession()
  const self = useSelf()
  const location = useLocation()
  // Only a sign-out that happens while inside the console sends the visitor home.
  const [enteredSignedIn] = useState(() => sessionStore.get().user !== null)

  if (!user && endedBy === 'logout' && enteredSignedIn) return <Navigate to="/" replace />
  if (self.isPending) return <FullPageSpinner />
  if (self.isError || !user) return <Navigate to="/login" replace state={{ from: location.pathname }} />
  return <Outlet />
}
