import { CopyIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable } from '@/components/data-table'
import { RowAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { copyText } from '@/lib/clipboard'
import { notify } from '@/lib/toast'
import { useAvailableModels, useModelOwners } from '../api/queries'
import type { AvailableModel } from '../types'
import { priceColumns } from './price-cells'
import { matchesView, PriceToolbar, usePriceList } from './price-toolbar'

/** Available models (every user): the models of the user's group with their prices. */
export function AvailableModelsPanel() {
  const { t } = useTranslation()
  const models = useAvailableModels()
  const owners = useModelOwners()
  const { view, toolbar } = usePriceList<AvailableModel>()
  const all = models.data ?? []
  const ratio = all[0]?.group_ratio ?? 1

  const copy = async (model: string) => {
    if (await copyText(model)) notify.success(t('common:copy.success'))
    else notify.warning(t('common:copy.failed'))
  }

  const c = priceColumns<AvailableModel>(t, {
    priced: (m) => m,
    owners: owners.data,
    view,
    ratio,
    unpriced: <Badge variant="destructive">{t('pricing:available.unpriced')}</Badge>,
  })
  const columns = [
    c.model,
    c.owner,
    c.type,
    c.input,
    c.output,
    {
      ...actionsColumn<AvailableModel>('', (m) => (
        <RowAction label={t('pricing:available.copyName')} onClick={() => void copy(m.model)} testId="available-copy">
          <CopyIcon />
        </RowAction>
      )),
      className: 'w-10',
    },
  ]
  const rows = all.filter((m) => matchesView(view, m.model, m.price?.channel_type))

  return (
    <div className="grid grid-cols-1 gap-4">
      <PriceToolbar {...toolbar} owners={owners.data ?? []} />
      {ratio !== 1 && all.length > 0 && (
        <p className="text-sm text-muted-foreground" data-testid="group-ratio">
          {t('pricing:available.groupRatio', { ratio })}
        </p>
      )}
      <DataTable
        name="available"
        testId="available-table"
        emptyTestId="available-empty"
        columns={columns}
        query={models}
        rows={rows}
        rowKey={(m) => m.model}
        emptyText={all.length === 0 ? t('pricing:available.empty') : t('pricing:noMatch')}
      />
    </div>
  )
}
