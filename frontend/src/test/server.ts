import { setupServer } from 'msw/node'
import { noticeHandlers } from '@/features/notice/mocks/handlers'
import { accountHandlers } from '@/features/account/mocks/handlers'
import { analyticsHandlers } from '@/features/analytics/mocks/handlers'
import { authHandlers } from '@/features/auth/mocks/handlers'
import { dashboardHandlers } from '@/features/dashboard/mocks/handlers'
import { invoicesHandlers } from '@/features/invoices/mocks/handlers'
import { pricingHandlers } from '@/features/pricing/mocks/handlers'
import { profileHandlers } from '@/features/profile/mocks/handlers'
import { settingsHandlers } from '@/features/settings/mocks/handlers'
import { systemHandlers } from '@/features/system/mocks/handlers'
import { logHandlers } from '@/features/logs/mocks/handlers'
import { ownerHandlers } from '@/features/owners/mocks/handlers'
import { redemptionHandlers } from '@/features/redemptions/mocks/handlers'
import { paymentHandlers } from '@/features/payment/mocks/handlers'
import { telegramHandlers } from '@/features/telegram/mocks/handlers'
import { topupHandlers } from '@/features/topup/mocks/handlers'
import { groupHandlers } from '@/features/groups/mocks/handlers'
import { userHandlers } from '@/features/users/mocks/handlers'
import { channelHandlers } from '@/features/channels/mocks/handlers'
import { siteHandlers } from '@/features/site/mocks/handlers'
import { tokenHandlers } from '@/features/tokens/mocks/handlers'
import { taskHandlers } from '@/features/tasks/mocks/handlers'

/** MSW server with every feature's default handlers; tests override with server.use(...). */
export const server = setupServer(...noticeHandlers, ...siteHandlers, ...authHandlers, ...tokenHandlers, ...logHandlers, ...ownerHandlers, ...redemptionHandlers, ...paymentHandlers, ...topupHandlers, ...groupHandlers, ...userHandlers, ...channelHandlers,
  ...accountHandlers, ...analyticsHandlers, ...dashboardHandlers, ...invoicesHandlers, ...pricingHandlers, ...profileHandlers, ...settingsHandlers, ...systemHandlers,
  ...taskHandlers, ...telegramHandlers,
)
