/** A row of GET /api/option; secrets come with an empty value and `set` (is one stored). */
export interface OptionItem {
  key: string
  value: string
  secret?: boolean
  set?: boolean
  /** Only root reads and changes it (administrators are not sent these at all). */
  root_only?: boolean
}
