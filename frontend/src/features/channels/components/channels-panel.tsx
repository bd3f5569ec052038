import { ChevronDownIcon, CloudIcon, EraserIcon, LayersIcon, TagsIcon, Trash2Icon, ZapIcon } from 'lucide-react'
import { useState, type Key } from 'react'
import { useTranslation } from 'react-i18next'
import { DataTable } from '@/components/data-table'
import { ConfirmDialog, CreateButton } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { DropdownMenu, DropdownMenuContent, DropdownMenuItem, DropdownMenuTrigger } from '@/components/ui/dropdown-menu'
import { Spinner } from '@/components/ui/spinner'
import { useListScreen } from '@/hooks/use-list-screen'
import { notify } from '@/lib/toast'
import { useBatchDeleteChannels, useDeleteChannel, useDeleteDisabledChannels } from '../api/delete-channels'
import { useChannels } from '../api/get-channels'
import { useChannelHealth } from '../api/get-health'
import type { ChannelFilters } from '../api/keys'
import type { Channel } from '../types'
import { BatchEditDialog, type BatchEditMode } from './batch-edit-dialog'
import { useChannelColumns } from './channel-columns'
import { CHANNEL_FILTERS, ChannelFilterBar } from './channel-filters'
import { ChannelFormDialog } from './channel-form-dialog'
import { TagsDialog } from './tags-dialog'
import { TestAllDialog } from './test-all-dialog'
import { useChannelActions } from './use-channel-actions'

/** Channels: filters, ordering, paging, selection, tests, balances, create/edit, copy, batch edits, delete. */
export function ChannelsPanel() {
  const { t } = useTranslation()
  const list = useListScreen<Channel, ChannelFilters>({ filters: CHANNEL_FILTERS, orderKeys: ['order'] })
  const channels = useChannels(list.params)
  const rows = channels.data?.data ?? []
  const actions = useChannelActions()

  // The selection is of the rows shown: another page, filter or order starts with none.
  const [selection, setSelection] = useState({ key: list.key, ids: new Set<Key>() })
  const selected = selection.key === list.key ? selection.ids : new Set<Key>()
  const select = (ids: Set<Key>) => setSelection({ key: list.key, ids })
  const selectedIds = [...selected] as number[]

  const [tagsOpen, setTagsOpen] = useState(false)
  const [confirm, setConfirm] = useState<'batch' | 'disabled' | null>(null)
  const [batchMode, setBatchMode] = useState<BatchEditMode | null>(null)
  const deleteMutation = useDeleteChannel()
  const batchMutation = useBatchDeleteChannels()
  const disabledMutation = useDeleteDisabledChannels()

  const filterByTag = (tag: string) => list.setFilters({ tag })
  const afterDelete = (count: number) => {
    list.deleted(count, rows.length)
    select(new Set())
  }
  const confirmBulk = () => {
    const onSuccess = ({ deleted }: { deleted: number }) => {
      notify.success(t('channels:toast.deletedMany', { count: deleted }))
      setConfirm(null)
      afterDelete(deleted)
    }
    if (confirm === 'batch') batchMutation.mutate(selectedIds, { onSuccess })
    else disabledMutation.mutate(undefined, { onSuccess })
  }

  // Channels with a circuit breaker open or probing on the node that answered.
  const heldOut = useChannelHealth().data
  const columns = useChannelColumns({
    rows,
    selected,
    onSelect: select,
    heldOut,
    actions,
    onTag: filterByTag,
    onEdit: list.form.edit,
    onDelete: list.setDeleting,
  })

  const toolbar = (
    <>
      <CreateButton label={t('channels:create')} onClick={list.form.create} testId="channel-create" />
      <Button variant="outline" onClick={actions.testAll} disabled={actions.testAllPending} data-testid="channel-test-all">
        {actions.testAllPending ? <Spinner /> : <ZapIcon />}
        {actions.testAllPending ? t('channels:actions.testingAll') : t('channels:actions.testAll')}
      </Button>
      <Button variant="outline" onClick={() => setTagsOpen(true)} data-testid="channel-tags">
        <TagsIcon />
        {t('channels:actions.tags')}
      </Button>
      <Button variant="outline" onClick={() => setConfirm('disabled')} data-testid="channel-delete-disabled">
        <Trash2Icon />
        {t('channels:actions.deleteDisabled')}
      </Button>
      <DropdownMenu>
        <DropdownMenuTrigger asChild>
          <Button variant="outline" data-testid="channel-batch">
            <LayersIcon />
            {t('channels:actions.batch')}
            <ChevronDownIcon />
          </Button>
        </DropdownMenuTrigger>
        <DropdownMenuContent align="start">
          <DropdownMenuItem onSelect={() => setBatchMode('azure')} data-testid="channel-batch-azure">
            <CloudIcon />
            {t('channels:actions.azureApi')}
          </DropdownMenuItem>
          <DropdownMenuItem onSelect={() => setBatchMode('model')} data-testid="channel-batch-model">
            <EraserIcon />
            {t('channels:actions.removeModel')}
          </DropdownMenuItem>
        </DropdownMenuContent>
      </DropdownMenu>
      {selected.size > 0 && (
        <Button variant="destructive" onClick={() => setConfirm('batch')} data-testid="channel-batch-delete">
          <Trash2Icon />
          {t('channels:actions.batchDelete', { count: selected.size })}
        </Button>
      )}
    </>
  )

  return (
    <div className="grid grid-cols-1 gap-4">
      <ChannelFilterBar list={list} onSearch={() => select(new Set())} actions={toolbar} />

      <DataTable
        name="channel"
        columns={columns}
        query={channels}
        list={list}
        rowProps={(c) => ({ 'data-state': selected.has(c.id) ? 'selected' : undefined })}
        sort={{ value: list.filters.order, onChange: (order) => list.setFilters({ order }) }}
        settings
        emptyText={list.filtered ? t('channels:noMatch') : t('channels:empty')}
      />

      <BatchEditDialog key={batchMode ?? 'closed'} mode={batchMode} onClose={() => setBatchMode(null)} ids={selectedIds} />
      <ChannelFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} channel={list.form.editing} />
      <TagsDialog
        open={tagsOpen}
        onOpenChange={setTagsOpen}
        onShowTag={(tag) => {
          setTagsOpen(false)
          filterByTag(tag)
        }}
      />
      <ConfirmDialog
        {...list.deleteDialog}
        title={t('channels:delete.title')}
        description={t('channels:delete.description', { name: list.deleting?.name ?? '' })}
        onConfirm={list.confirmDelete(
          (c, done) =>
            deleteMutation.mutate(c.id, {
              onSuccess: () => {
                done.onSuccess()
                select(new Set())
              },
            }),
          t('channels:toast.deleted'),
          rows.length,
        )}
        pending={deleteMutation.isPending}
        testId="channel-delete-dialog"
      />
      <ConfirmDialog
        open={confirm !== null}
        onOpenChange={(open) => !open && setConfirm(null)}
        title={confirm === 'batch' ? t('channels:batchDelete.title') : t('channels:deleteDisabled.title')}
        description={
          confirm === 'batch' ? t('channels:batchDelete.description', { count: selected.size }) : t('channels:deleteDisabled.description')
        }
        onConfirm={confirmBulk}
        pending={batchMutation.isPending || disabledMutation.isPending}
        testId="channel-bulk-dialog"
      />
      <TestAllDialog result={actions.testAllResult} onClose={actions.closeTestAllResult} />
    </div>
  )
}
