/** GET /api/system/info: the answering node's resources. */
export interface SystemInfo {
  cpu_percent: number
  memory: { total_bytes: number; used_bytes: number; process_rss_bytes: number }
  cores: number
  uptime_seconds: number
  start_time: number
  version: string
  backend: string
  redis: boolean
  pending_consume_records: number
}

export interface LogLine {
  seq: number
  /** RFC 3339, UTC. */
  time: string
  level: string
  text: string
}

/** GET /api/system/log?after=&limit=: lines oldest first; poll with `after=next`. */
export interface LogPage {
  lines: LogLine[]
  next: number
  truncated: boolean
  capacity: number
}
