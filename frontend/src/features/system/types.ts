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
  /**
   * Cluster-wide background jobs and the node that holds each one's lease. Optional: a node
   * that predates the field leaves it out during a rolling upgrade.
   */
  leases?: Lease[]
}

/**
 * One cluster-wide job lease. Known names: `telegram`, `task-poll`, `channel-test`,
 * `local-ledger`, and `invoice…` (e.g. `invoice-2026-10`); others are shown raw.
 */
export interface Lease {
  name: string
  /** Opaque node id, e.g. `12345-ab12CD34`. */
  holder: string
  /** Unix seconds. */
  expires_at: number
  /** False: the lease expired and no node runs the job right now (`holder` held it last). */
  held: boolean
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
