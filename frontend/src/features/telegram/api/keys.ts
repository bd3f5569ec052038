export interface TelegramMenuListParams {
  page: number
  size: number
  keyword: string
}

export const telegramKeys = {
  all: ['telegram'] as const,
  menus: () => [...telegramKeys.all, 'menus'] as const,
  menuList: (params: TelegramMenuListParams) => [...telegramKeys.menus(), params] as const,
  status: () => [...telegramKeys.all, 'status'] as const,
}
