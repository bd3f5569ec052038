export const topupKeys = {
  all: ['topup'] as const,
  gateways: () => [...topupKeys.all, 'gateways'] as const,
  quote: (uuid: string, amount: number) => [...topupKeys.all, 'quote', uuid, amount] as const,
}
