import { ActivityIcon, LayoutDashboardIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs'
import { AccountCard } from '@/features/dashboard/components/account-card'
import { QuickStartCard } from '@/features/dashboard/components/quick-start-card'
import { SiteStatusPanel } from '@/features/dashboard/components/site-status-panel'
import { UsageOverview } from '@/features/dashboard/components/usage-overview'
import { useUser } from '@/stores/session'
import { Screen } from '@/components/screen'

export default function DashboardRoute() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <Screen title={t('panel:dashboard.title')} description={t('panel:dashboard.welcome', { name: user.display_name || user.username })}>
      <Tabs defaultValue="overview">
        <TabsList>
          <TabsTrigger value="overview" data-testid="tab-overview">
            <LayoutDashboardIcon />
            {t('dashboard:tabs.overview')}
          </TabsTrigger>
          <TabsTrigger value="status" data-testid="tab-status">
            <ActivityIcon />
            {t('dashboard:tabs.status')}
          </TabsTrigger>
        </TabsList>
        <TabsContent value="overview" className="grid grid-cols-1 gap-4">
          <AccountCard user={user} />
          <UsageOverview user={user} />
          <QuickStartCard />
        </TabsContent>
        <TabsContent value="status" className="grid grid-cols-1 gap-4">
          <SiteStatusPanel />
        </TabsContent>
      </Tabs>
    </Screen>
  )
}
