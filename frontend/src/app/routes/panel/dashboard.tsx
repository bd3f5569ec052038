import { ActivityIcon, LayoutDashboardIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs'
import { AccountCard } from '@/features/dashboard/components/account-card'
import { QuickStartCard } from '@/features/dashboard/components/quick-start-card'
import { SiteStatusPanel } from '@/features/dashboard/components/site-status-panel'
import { UsageOverview } from '@/features/dashboard/components/usage-overview'
import { useUser } from '@/stores/session'

export default function DashboardRoute() {
  const { t } = useTranslation()
  const user = useUser()
  if (!user) return null // the route guard redirects
  return (
    <div className="grid grid-cols-1 gap-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">{t('panel:dashboard.title')}</h1>
        <p className="text-muted-foreground">
          {t('panel:dashboard.welcome', { name: user.display_name || user.username })}
        </p>
      </div>
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
    </div>
  )
}
