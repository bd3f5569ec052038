import { setupServer } from 'msw/node'
import { authHandlers } from '@/features/auth/mocks/handlers'
import { logHandlers } from '@/features/logs/mocks/handlers'
import { siteHandlers } from '@/features/site/mocks/handlers'
import { tokenHandlers } from '@/features/tokens/mocks/handlers'

/** MSW server with every feature's default handlers; tests override with server.use(...). */
export const server = setupServer(...siteHandlers, ...authHandlers, ...tokenHandlers, ...logHandlers)
