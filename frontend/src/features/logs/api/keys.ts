export interface LogFilters {
  /** 0 all, 1 recharge, 2 consumption, 3 management, 4 system, 5 error. */
  type: number
  /** Prefix of the model name (the server matches by prefix). */
  model_name: string
  /** Prefix of the key name. */
  token_name: string
  group: string
  source_ip: string
  /** Unix seconds; 0 = no bound. */
  start_timestamp: number
  end_timestamp: number
  /** Administrators only. */
  username: string
  channel: string
}

export interface LogListParams extends LogFilters {
  page: number
  size: number
}

/** `self`: GET /api/log/self (a user's own logs); `all`: GET /api/log (administrators). */
export type LogScope = 'self' | 'all'

export const logKeys = {
  all: ['logs'] as const,
  lists: () => [...logKeys.all, 'list'] as const,
  list: (scope: LogScope, params: LogListParams) => [...logKeys.lists(), scope, params] as const,
  stat: (scope: LogScope, filters: LogFilters) => [...logKeys.all, 'stat', scope, filters] as const,
}
