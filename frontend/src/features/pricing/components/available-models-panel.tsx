import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { CopyIcon } from 'lucide-react'
import { ListState, RowAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Card, CardContent } from '@/components/ui/card'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { copyText } from '@/lib/clipboard'
import { notify } from '@/lib/toast'
import { useAvailableModels, useModelOwners } from '../api/queries'
import { ownerName, PriceText, PriceTypeBadge } from './price-cells'
import { DEFAULT_VIEW, matchesView, PriceToolbar } from './price-toolbar'

/** Available models (every user): the models of the user's group with their prices. */
export function AvailableModelsPanel() {
  const { t } = useTranslation()
  const models = useAvailableModels()
  const owners = useModelOwners()
  const [view, setView] = useState(DEFAULT_VIEW)
  const all = models.data ?? []
  const rows = all.filter((m) => matchesView(view, m.model, m.price?.channel_type))
  const ratio = all[0]?.group_ratio ?? 1

  const copy = async (model: string) => {
    if (await copyText(model)) notify.success(t('common:copy.success'))
    else notify.warning(t('common:copy.failed'))
  }

  return (
    <div className="grid grid-cols-1 gap-4">
      <PriceToolbar view={view} onChange={setView} owners={owners.data ?? []} />
      {ratio !== 1 && all.length > 0 && (
        <p className="text-sm text-muted-foreground" data-testid="group-ratio">
          {t('pricing:available.groupRatio', { ratio })}
        </p>
      )}
      <Card>
        <CardContent className="p-0">
          <ListState
            loading={models.isPending} query={models}
            empty={rows.length === 0}
            emptyText={all.length === 0 ? t('pricing:available.empty') : t('pricing:noMatch')}
            emptyTestId="available-empty"
          >
            <Table cards data-testid="available-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('pricing:columns.model')}</TableHead>
                  <TableHead>{t('pricing:columns.owner')}</TableHead>
                  <TableHead>{t('pricing:columns.type')}</TableHead>
                  <TableHead>{t('pricing:columns.input')}</TableHead>
                  <TableHead>{t('pricing:columns.output')}</TableHead>
                  <TableHead data-card="actions" className="w-10" />
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((m) => (
                  <TableRow key={m.model} data-testid={`available-row-${m.model}`}>
                    <TableCell data-card="title" className="font-medium whitespace-nowrap">{m.model}</TableCell>
                    <TableCell>{m.price ? ownerName(owners.data, m.price.channel_type) : '-'}</TableCell>
                    {m.price ? (
                      <>
                        <TableCell>
                          <PriceTypeBadge type={m.price.type} />
                        </TableCell>
                        <TableCell>
                          <PriceText ratio={m.price.input * ratio} type={m.price.type} currency={view.currency} per1M={view.per1M} />
                        </TableCell>
                        <TableCell>
                          {m.price.type === 'tokens' ? (
                            <PriceText ratio={m.price.output * ratio} type="tokens" currency={view.currency} per1M={view.per1M} />
                          ) : (
                            '-'
                          )}
                        </TableCell>
                      </>
                    ) : (
                      <TableCell colSpan={3}>
                        <Badge variant="destructive">{t('pricing:available.unpriced')}</Badge>
                      </TableCell>
                    )}
                    <TableCell data-card="actions">
                      <RowAction label={t('pricing:available.copyName')} onClick={() => void copy(m.model)} testId="available-copy">
                        <CopyIcon />
                      </RowAction>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>
    </div>
  )
}
