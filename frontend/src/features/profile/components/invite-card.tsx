import { useTranslation } from 'react-i18next'
import { CopyField } from '@/components/copy-field'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { serverAddress } from '@/lib/chat-links'
import { renderQuota } from '@/lib/format'
import { useSiteInfo } from '@/stores/site'
import type { User } from '@/types/api'

/** The invitation link (`/register?aff=<code>`) and what inviting has earned (spec 3: aff_count, aff_quota). */
export function InviteCard({ user }: { user: User }) {
  const { t } = useTranslation()
  const { server_address, display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }
  const code = user.aff_code?.trim()
  const link = code ? `${serverAddress(server_address, window.location.origin)}/register?aff=${encodeURIComponent(code)}` : ''
  const stats = [
    { id: 'count', label: t('profile:invite.count'), value: String(user.aff_count ?? 0) },
    { id: 'quota', label: t('profile:invite.quota'), value: renderQuota(user.aff_quota ?? 0, display) },
  ]
  return (
    <Card data-testid="invite-card">
      <CardHeader>
        <CardTitle>
          <h2>{t('profile:invite.title')}</h2>
        </CardTitle>
        <CardDescription>{t('profile:invite.description')}</CardDescription>
      </CardHeader>
      <CardContent className="grid grid-cols-1 gap-4">
        {link ? (
          <CopyField value={link} label={t('profile:invite.link')} testId="invite-link" downloadName="invite-link.txt" />
        ) : (
          <p className="text-sm text-muted-foreground" data-testid="invite-none">
            {t('profile:invite.none')}
          </p>
        )}
        <dl className="grid grid-cols-1 gap-3 sm:grid-cols-2">
          {stats.map((s) => (
            <div key={s.id} className="rounded-lg border p-3">
              <dt className="text-xs text-muted-foreground">{s.label}</dt>
              <dd className="mt-1 text-lg font-semibold tabular-nums" data-testid={`invite-${s.id}`}>
                {s.value}
              </dd>
            </div>
          ))}
        </dl>
      </CardContent>
    </Card>
  )
}
