export interface Usage {
  quota: number
  request_count: number
  prompt_tokens: number
  completion_tokens: number
}

interface PeriodInfo {
  start_day: number
  end_day: number
  days: number
}

/** GET /api/analytics/statistics. */
export interface Statistics extends Usage, PeriodInfo {
  users: number
  channels: number
  total_users: number
  total_channels: number
  enabled_channels: number
}

/** GET /api/analytics/period. */
export interface PeriodSeries extends PeriodInfo {
  by_day: (Usage & { day: number })[]
  by_model: (Usage & { model_name: string })[]
  series: (Usage & { day: number; model_name: string })[]
}

export interface UserUsage extends Usage {
  user_id: number
  username: string
  tokens: number
}

/** GET /api/analytics/users: a page plus the period. */
export interface UserUsagePage extends PeriodInfo {
  data: UserUsage[]
  page: number
  size: number
  total_count: number
}

/** A period as the API takes it: unix seconds of the first and last UTC day. */
export interface PeriodParams {
  start_timestamp: number
  end_timestamp: number
}
