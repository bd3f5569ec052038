import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { CopyField } from '@/components/copy-field'
import { ConfirmDialog } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { useGenerateAccessToken } from '../api/generate-access-token'

/** The card's element id: the Telegram binding steps link here (the bot asks for this token). */
export const ACCESS_TOKEN_ID = 'access-token'

/** Access token for the management API: made on request, shown once, replaces the old one. */
export function AccessTokenCard({ hasToken }: { hasToken: boolean }) {
  const { t } = useTranslation()
  const mutation = useGenerateAccessToken()
  const [token, setToken] = useState<string | null>(null)
  const [confirming, setConfirming] = useState(false)

  const generate = () =>
    mutation.mutate(undefined, {
      onSuccess: (value) => {
        setConfirming(false)
        setToken(value)
        notify.success(t('profile:accessToken.generated'))
      },
    })

  return (
    <Card id={ACCESS_TOKEN_ID} className="scroll-mt-20" data-testid="access-token-card">
      <CardHeader>
        <CardTitle>
          <h2>{t('profile:accessToken.title')}</h2>
        </CardTitle>
        <CardDescription>{t('profile:accessToken.description')}</CardDescription>
      </CardHeader>
      <CardContent className="grid grid-cols-1 gap-3">
        {token ? (
          <>
            <CopyField value={token} label={t('profile:accessToken.title')} testId="access-token-value" />
            <p className="text-sm text-amber-700 dark:text-amber-300">{t('profile:accessToken.once')}</p>
          </>
        ) : (
          <p className="text-sm text-muted-foreground" data-testid="access-token-state">
            {hasToken ? t('profile:accessToken.exists') : t('profile:accessToken.none')}
          </p>
        )}
        <div>
          <Button
            variant={hasToken || token ? 'outline' : 'default'}
            onClick={() => (hasToken || token ? setConfirming(true) : generate())}
            disabled={mutation.isPending}
            data-testid="access-token-generate"
          >
            {mutation.isPending && <Spinner />}
            {hasToken || token ? t('profile:accessToken.regenerate') : t('profile:accessToken.generate')}
          </Button>
        </div>
        <ConfirmDialog
          open={confirming}
          onOpenChange={setConfirming}
          title={t('profile:accessToken.confirmTitle')}
          description={t('profile:accessToken.confirmDescription')}
          confirmLabel={t('profile:accessToken.regenerate')}
          onConfirm={generate}
          pending={mutation.isPending}
          testId="access-token-confirm"
        />
      </CardContent>
    </Card>
  )
}
