import { useTranslation } from 'react-i18next'
import { CopyField } from '@/components/copy-field'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { useSiteInfo } from '@/stores/site'
import { STRIPE_WEBHOOK_EVENT, stripeWebhookUrl } from '../webhook'

/**
 * The address to register as a webhook endpoint in the Stripe dashboard (with a copy button),
 * and the event to subscribe it to.
 */
export function StripeWebhookField({ gateway }: { gateway: { uuid: string; notify_domain: string } }) {
  const { t } = useTranslation()
  const { server_address } = useSiteInfo()
  const url = stripeWebhookUrl(gateway, server_address, window.location.origin)
  return (
    <div className="grid gap-2" data-testid="stripe-webhook">
      <p className="text-sm font-medium">{t('payment:webhook.label')}</p>
      <CopyField value={url} label={t('payment:webhook.label')} testId="stripe-webhook-url" downloadName="stripe-webhook.txt" />
      <p className="text-sm text-muted-foreground" data-testid="stripe-webhook-hint">
        {t('payment:webhook.hint', { event: STRIPE_WEBHOOK_EVENT })}
      </p>
    </div>
  )
}

/** The webhook address of a Stripe gateway, from its row in the list. */
export function StripeWebhookDialog({
  gateway,
  onOpenChange,
}: {
  /** The gateway to show; none closes the dialog. */
  gateway: { name: string; uuid: string; notify_domain: string } | null
  onOpenChange: (open: boolean) => void
}) {
  const { t } = useTranslation()
  return (
    <Dialog open={gateway !== null} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-xl" data-testid="stripe-webhook-dialog">
        <DialogHeader>
          <DialogTitle>{t('payment:webhook.title')}</DialogTitle>
          <DialogDescription>{t('payment:webhook.description', { name: gateway?.name ?? '' })}</DialogDescription>
        </DialogHeader>
        {gateway && <StripeWebhookField gateway={gateway} />}
        <DialogFooter>
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            {t('common:actions.close')}
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  )
}
