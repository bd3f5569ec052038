export const siteKeys = {
  all: ['site'] as const,
  status: () => [...siteKeys.all, 'status'] as const,
  owners: () => [...siteKeys.all, 'ownedby'] as const,
}

/** GET /api/about: the operator's About text. */
export const aboutKey = () => [...siteKeys.all, 'about'] as const
