export const pricingKeys = {
  all: ['pricing'] as const,
  prices: () => [...pricingKeys.all, 'prices'] as const,
  available: () => [...pricingKeys.all, 'available'] as const,
  owners: () => [...pricingKeys.all, 'owners'] as const,
  warnings: () => [...pricingKeys.all, 'warnings'] as const,
}
