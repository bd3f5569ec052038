import { ROLE } from '@/types/api'

export type RoleKey = 'user' | 'admin' | 'root' | 'unknown'

/** Translation key suffix for a role number: `t(\`common:role.${roleKey(role)}\`)`. */
export function roleKey(role: number): RoleKey {
  switch (role) {
    case ROLE.user:
      return 'user'
    case ROLE.admin:
      return 'admin'
    case ROLE.root:
      return 'root'
    default:
      return 'unknown'
  }
}

/** Administrators are role 10 and up (spec section 6). */
export function isAdmin(role: number | undefined): boolean {
  return (role ?? 0) >= ROLE.admin
}
