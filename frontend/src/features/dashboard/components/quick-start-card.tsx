import { RocketIcon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { CopyField } from '@/components/copy-field'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
import { useCreatePlaygroundToken } from '../api/create-playground-token'

/** The base URL clients call: the configured server address, else this site. */
export function apiBase(serverAddress: string): string {
  return (serverAddress || window.location.origin).replace(/\/+$/, '')
}

export function curlExample(base: string, key: string, model: string): string {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }] })
  return [
    `curl ${base}/v1/chat/completions \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -H "Authorization: Bearer ${key}" \\`,
    `  -d '${body}'`,
  ].join('\n')
}

/** Quick start: make (or fetch again) the "playground" key and show how to call the API with it. */
export function QuickStartCard({ model }: { model?: string }) {
  const { t } = useTranslation()
  const { server_address } = useSiteInfo()
  const mutation = useCreatePlaygroundToken()
  const [key, setKey] = useState<string | null>(null)
  const base = apiBase(server_address)

  const create = () =>
    mutation.mutate(undefined, {
      onSuccess: (token) => {
        setKey(token.key)
        notify.success(token.created ? t('dashboard:quickStart.created') : t('dashboard:quickStart.reused'))
      },
    })

  return (
    <Card data-testid="quick-start">
      <CardHeader>
        <CardTitle>
          <h2 className="flex items-center gap-2">
            <RocketIcon className="size-5" />
            {t('dashboard:quickStart.title')}
          </h2>
        </CardTitle>
        <CardDescription>{t('dashboard:quickStart.description')}</CardDescription>
      </CardHeader>
      <CardContent className="grid grid-cols-1 gap-4">
        <div className="grid gap-1.5">
          <span className="text-sm font-medium">{t('dashboard:quickStart.baseUrl')}</span>
          <CopyField value={`${base}/v1`} label={t('dashboard:quickStart.baseUrl')} testId="quick-start-base" />
        </div>
        {key ? (
          <>
            <div className="grid gap-1.5">
              <span className="text-sm font-medium">{t('dashboard:quickStart.key')}</span>
              <CopyField value={key} label={t('dashboard:quickStart.key')} testId="quick-start-key" />
              <p className="text-xs text-muted-foreground">{t('dashboard:quickStart.keyHint')}</p>
              <p className="text-xs text-muted-foreground">{t('dashboard:quickStart.balanceRule')}</p>
            </div>
            <div className="grid gap-1.5">
              <span className="text-sm font-medium">{t('dashboard:quickStart.example')}</span>
              <CopyField
                multiline
                value={curlExample(base, key, model || 'gpt-4o-mini')}
                label={t('dashboard:quickStart.example')}
                testId="quick-start-curl"
              />
            </div>
          </>
        ) : (
          <div>
            <Button onClick={create} disabled={mutation.isPending} data-testid="quick-start-create">
              {mutation.isPending && <Spinner />}
              {t('dashboard:quickStart.create')}
            </Button>
          </div>
        )}
      </CardContent>
    </Card>
  )
}
