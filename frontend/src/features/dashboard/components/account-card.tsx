import { useTranslation } from 'react-i18next'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { renderNumber, renderQuota } from '@/lib/format'
import { roleKey } from '@/lib/roles'
import { useSiteInfo } from '@/stores/site'
import type { User } from '@/types/api'

export function AccountCard({ user }: { user: User }) {
  const { t } = useTranslation()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }

  const rows = [
    { id: 'username', label: t('panel:dashboard.username'), value: user.username },
    { id: 'role', label: t('panel:dashboard.role'), value: t(`common:role.${roleKey(user.role)}`) },
    { id: 'group', label: t('panel:dashboard.group'), value: user.group || '-' },
    { id: 'quota', label: t('panel:dashboard.quota'), value: renderQuota(user.quota, display) },
    { id: 'used-quota', label: t('panel:dashboard.usedQuota'), value: renderQuota(user.used_quota, display) },
    { id: 'request-count', label: t('panel:dashboard.requestCount'), value: renderNumber(user.request_count) },
  ]

  return (
    <Card data-testid="account-card">
      <CardHeader>
        <CardTitle>
          <h2>{t('panel:dashboard.account')}</h2>
        </CardTitle>
        <CardDescription>{user.email || user.display_name || user.username}</CardDescription>
      </CardHeader>
      <CardContent>
        <dl className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {rows.map((row) => (
            <div key={row.id} className="rounded-lg border bg-background/50 p-4">
              <dt className="text-xs text-muted-foreground">{row.label}</dt>
              <dd className="mt-1 truncate text-lg font-semibold" data-testid={`dashboard-${row.id}`}>
                {row.value}
              </dd>
            </div>
          ))}
        </dl>
      </CardContent>
    </Card>
  )
}
