export interface RedemptionListParams {
  page: number
  size: number
  keyword: string
  /** 0 = any. */
  status: number
}

export const redemptionKeys = {
  all: ['redemptions'] as const,
  lists: () => [...redemptionKeys.all, 'list'] as const,
  list: (params: RedemptionListParams) => [...redemptionKeys.lists(), params] as const,
}
