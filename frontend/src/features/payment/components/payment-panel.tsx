import { CreditCardIcon, ReceiptTextIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs'
import { GatewaysPanel } from './gateways-panel'
import { OrdersPanel } from './orders-panel'

/** Online payment (administrators): the gateways users pay through, and the order log. */
export function PaymentPanel() {
  const { t } = useTranslation()
  return (
    <Tabs defaultValue="gateways">
      <TabsList>
        <TabsTrigger value="gateways" data-testid="payment-tab-gateways">
          <CreditCardIcon aria-hidden />
          {t('payment:tabs.gateways')}
        </TabsTrigger>
        <TabsTrigger value="orders" data-testid="payment-tab-orders">
          <ReceiptTextIcon aria-hidden />
          {t('payment:tabs.orders')}
        </TabsTrigger>
      </TabsList>
      <TabsContent value="gateways">
        <GatewaysPanel />
      </TabsContent>
      <TabsContent value="orders">
        <OrdersPanel />
      </TabsContent>
    </Tabs>
  )
}
