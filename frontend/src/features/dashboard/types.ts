/** Usage figures of one day, model or period (from the daily rollup). */
export interface Usage {
  request_count: number
  quota: number
  prompt_tokens: number
  completion_tokens: number
  /** Requests of `request_count` answered from the response cache. */
  cache_hits: number
}

/** GET /api/user/dashboard?days=N. Days are UTC midnights in unix seconds. */
export interface Dashboard {
  days: number
  start_day: number
  end_day: number
  series: (Usage & { day: number; model_name: string })[]
  by_day: (Usage & { day: number })[]
  by_model: (Usage & { model_name: string })[]
  totals: Usage
}

/** POST /api/token/playground: the user's playground key (`created` false when it existed). */
export interface PlaygroundToken {
  id: number
  key: string
  created: boolean
}
