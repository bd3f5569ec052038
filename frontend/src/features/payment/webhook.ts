import { serverAddress } from '@/lib/chat-links'

/** The Stripe event a Stripe gateway's webhook endpoint must subscribe to. */
export const STRIPE_WEBHOOK_EVENT = 'checkout.session.completed'

/**
 * Where Stripe reports payments for a gateway: `{origin}/api/payment/notify/{uuid}`, the origin
 * being the gateway's callback address (`notify_domain`), else the site's server address
 * (site status `server_address`), else this page's origin; no trailing slash before the path.
 */
export function stripeWebhookUrl(
  gateway: { uuid: string; notify_domain: string },
  siteServerAddress: string,
  pageOrigin: string,
): string {
  const origin = serverAddress(gateway.notify_domain.trim() || siteServerAddress, pageOrigin)
  return `${origin}/api/payment/notify/${encodeURIComponent(gateway.uuid)}`
}
