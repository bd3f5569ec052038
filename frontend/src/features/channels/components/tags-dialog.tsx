import { FilterIcon, PowerIcon, PowerOffIcon, SaveIcon, Trash2Icon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { ListState, RowAction } from '@/components/list-kit'
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Input } from '@/components/ui/input'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { notify } from '@/lib/toast'
import { useDeleteTagDisabled, useTags, useUpdateTag, type TagEdit } from '../api/tags'
import type { ChannelTag } from '../types'

export interface TagsDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** Filter the channel list by this tag. */
  onShowTag: (tag: string) => void
}

/** The tags of the channels, with operations on every channel of a tag. */
export function TagsDialog({ open, onOpenChange, onShowTag }: TagsDialogProps) {
  const { t } = useTranslation()
  const tags = useTags(open)
  const rows = tags.data ?? []
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-3xl" data-testid="channel-tags-dialog">
        <DialogHeader>
          <DialogTitle>{t('channels:tags.title')}</DialogTitle>
          <DialogDescription>{t('channels:tags.description')}</DialogDescription>
        </DialogHeader>
        <ListState loading={tags.isPending} query={tags} empty={rows.length === 0} emptyText={t('channels:tags.empty')} emptyTestId="channel-tags-empty">
          <Table data-testid="channel-tags-table">
            <TableHeader>
              <TableRow>
                <TableHead>{t('channels:tags.tag')}</TableHead>
                <TableHead className="text-right">{t('channels:tags.count')}</TableHead>
                <TableHead>{t('channels:columns.priority')}</TableHead>
                <TableHead>{t('channels:columns.weight')}</TableHead>
                <TableHead className="text-right">{t('channels:columns.actions')}</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {rows.map((row) => (
                <TagRow key={row.tag} row={row} onShow={() => onShowTag(row.tag)} />
              ))}
            </TableBody>
          </Table>
        </ListState>
      </DialogContent>
    </Dialog>
  )
}

function TagRow({ row, onShow }: { row: ChannelTag; onShow: () => void }) {
  const { t } = useTranslation()
  const [priority, setPriority] = useState('')
  const [weight, setWeight] = useState('')
  const update = useUpdateTag()
  const purge = useDeleteTagDisabled()

  const send = (edit: Omit<TagEdit, 'tag'>) =>
    update.mutate(
      { tag: row.tag, ...edit },
      { onSuccess: ({ updated }) => notify.success(t('channels:tags.updated', { count: updated, tag: row.tag })) },
    )

  const save = () => {
    const p = priority.trim()
    const w = weight.trim()
    if (!p && !w) notify.warning(t('channels:tags.nothing'))
    else if (p && !/^\d+$/.test(p)) notify.warning(t('channels:validation.priority'))
    else if (w && (!/^\d+$/.test(w) || Number(w) < 1)) notify.warning(t('channels:validation.weight'))
    else send({ ...(p ? { priority: Number(p) } : {}), ...(w ? { weight: Number(w) } : {}) })
  }

  return (
    <TableRow data-testid={`channel-tag-${row.tag}`}>
      <TableCell className="font-medium">{row.tag}</TableCell>
      <TableCell className="text-right tabular-nums">{row.count}</TableCell>
      <TableCell>
        <Input
          type="number"
          min={0}
          className="h-8 w-20"
          value={priority}
          onChange={(e) => setPriority(e.target.value)}
          aria-label={t('channels:tags.priorityOf', { tag: row.tag })}
        />
      </TableCell>
      <TableCell>
        <Input
          type="number"
          min={1}
          className="h-8 w-20"
          value={weight}
          onChange={(e) => setWeight(e.target.value)}
          aria-label={t('channels:tags.weightOf', { tag: row.tag })}
        />
      </TableCell>
      <TableCell>
        <div className="flex justify-end gap-1">
          <RowAction label={t('channels:tags.save')} onClick={save} disabled={update.isPending} testId="channel-tag-save">
            <SaveIcon />
          </RowAction>
          <RowAction label={t('channels:tags.show')} onClick={onShow} testId="channel-tag-show">
            <FilterIcon />
          </RowAction>
          <RowAction
            label={t('channels:tags.enableAll')}
            onClick={() => send({ status: 1 })}
            disabled={update.isPending}
            testId="channel-tag-enable"
          >
            <PowerIcon />
          </RowAction>
          <RowAction
            label={t('channels:tags.disableAll')}
            onClick={() => send({ status: 2 })}
            disabled={update.isPending}
            testId="channel-tag-disable"
          >
            <PowerOffIcon />
          </RowAction>
          <RowAction
            label={t('channels:tags.deleteDisabled')}
            onClick={() =>
              purge.mutate(row.tag, {
                onSuccess: ({ deleted }) => notify.success(t('channels:toast.deletedMany', { count: deleted })),
              })
            }
            disabled={purge.isPending}
            testId="channel-tag-delete-disabled"
            className="text-destructive hover:text-destructive"
          >
            <Trash2Icon />
          </RowAction>
        </div>
      </TableCell>
    </TableRow>
  )
}
