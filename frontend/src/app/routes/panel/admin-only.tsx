import type { ReactNode } from 'react'
import { Navigate } from 'react-router'
import { isAdmin } from '@/lib/roles'
import { useUser } from '@/stores/session'

/** Administrator screens: anyone else lands on the console's not-found page (the server refuses them anyway). */
export function AdminOnly({ children }: { children: ReactNode }) {
  const user = useUser()
  if (!isAdmin(user?.role)) return <Navigate to="/panel/404" replace />
  return <>{children}</>
}
