import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { ListState } from '@/components/list-kit'
import { Card, CardContent } from '@/components/ui/card'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { useModelOwners, usePrices } from '../api/queries'
import { ownerName, PriceText, PriceTypeBadge } from './price-cells'
import { DEFAULT_VIEW, matchesView, PriceToolbar } from './price-toolbar'

/** The public price list (GET /api/prices), searchable, in dollars or yuan. */
export function PublicPriceTable() {
  const { t } = useTranslation()
  const prices = usePrices()
  const owners = useModelOwners()
  const [view, setView] = useState(DEFAULT_VIEW)
  const all = prices.data ?? []
  const rows = all.filter((p) => matchesView(view, p.model, p.channel_type)).sort((a, b) => a.model.localeCompare(b.model))
  const usedOwners = (owners.data ?? []).filter((o) => all.some((p) => p.channel_type === o.id))

  return (
    <div className="grid grid-cols-1 gap-4">
      <PriceToolbar view={view} onChange={setView} owners={usedOwners} />
      <Card>
        <CardContent className="p-0">
          <ListState
            loading={prices.isPending} query={prices}
            empty={rows.length === 0}
            emptyText={all.length === 0 ? t('pricing:public.empty') : t('pricing:noMatch')}
            emptyTestId="public-price-empty"
          >
            <Table cards data-testid="public-price-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('pricing:columns.model')}</TableHead>
                  <TableHead>{t('pricing:columns.owner')}</TableHead>
                  <TableHead>{t('pricing:columns.type')}</TableHead>
                  <TableHead>{t('pricing:columns.input')}</TableHead>
                  <TableHead>{t('pricing:columns.output')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((p) => (
                  <TableRow key={p.model} data-testid={`public-price-row-${p.model}`}>
                    <TableCell data-card="title" className="font-medium whitespace-nowrap">{p.model}</TableCell>
                    <TableCell>{ownerName(owners.data, p.channel_type)}</TableCell>
                    <TableCell>
                      <PriceTypeBadge type={p.type} />
                    </TableCell>
                    <TableCell data-testid="public-price-input">
                      <PriceText ratio={p.input} type={p.type} currency={view.currency} per1M={view.per1M} />
                    </TableCell>
                    <TableCell>
                      {p.type === 'tokens' ? (
                        <PriceText ratio={p.output} type="tokens" currency={view.currency} per1M={view.per1M} />
                      ) : (
                        '-'
                      )}
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
