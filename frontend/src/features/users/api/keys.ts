export interface UserListParams {
  page: number
  size: number
  keyword: string
  group: string
  /** 0 = any. */
  role: number
  /** 0 = any. */
  status: number
  /** `field` or `-field`. */
  order: string
}

export const userKeys = {
  all: ['users'] as const,
  lists: () => [...userKeys.all, 'list'] as const,
  list: (params: UserListParams) => [...userKeys.lists(), params] as const,
  groupMap: () => [...userKeys.all, 'group-map'] as const,
}
