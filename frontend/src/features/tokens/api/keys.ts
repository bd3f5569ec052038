export interface TokenListParams {
  page: number
  size: number
  keyword: string
}

export const tokenKeys = {
  all: ['tokens'] as const,
  lists: () => [...tokenKeys.all, 'list'] as const,
  list: (params: TokenListParams) => [...tokenKeys.lists(), params] as const,
  key: (id: number) => [...tokenKeys.all, 'key', id] as const,
}
