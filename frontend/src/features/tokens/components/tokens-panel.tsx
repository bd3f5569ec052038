import { useQueryClient } from '@tanstack/react-query'
import { CopyIcon } from 'lucide-react'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { FilterBar, SearchInput } from '@/components/filter-bar'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction, flipStatus, RowAction, TitleCell, ToggleAction } from '@/components/list-kit'
import { useListScreen } from '@/hooks/use-list-screen'
import { copyText } from '@/lib/clipboard'
import { formatTimestamp, renderQuota } from '@/lib/format'
import { notifyCopied } from '@/lib/toast'
import { useQuotaDisplay } from '@/stores/site'
import { TOKEN_STATUS, type Token } from '@/types/api'
import { useDeleteToken } from '../api/delete-token'
import { ChatLinksMenu } from './chat-links-menu'
import { getTokenKeyQueryOptions } from '../api/get-token-key'
import { useTokens } from '../api/get-tokens'
import { useUpdateToken } from '../api/update-token'
import { TokenFormDialog } from './token-form-dialog'
import { TokenKeyDialog } from './token-key-dialog'
import { TokenStatusBadge } from './token-status-badge'

const FILTERS = { keyword: '' }

/** The tokens screen: search, list with paging, create/edit, enable/disable, delete, copy key. */
export function TokensPanel() {
  const { t } = useTranslation()
  const queryClient = useQueryClient()
  const display = useQuotaDisplay()
  const list = useListScreen<Token, typeof FILTERS>({ filters: FILTERS })
  const tokens = useTokens(list.params)
  const [shownKey, setShownKey] = useState<{ key: string; mode: 'created' | 'manual' } | null>(null)
  const updateMutation = useUpdateToken()
  const deleteMutation = useDeleteToken()
  const rows = tokens.data?.data ?? []

  const copyKey = async (token: Token) => {
    let key: string
    try {
      key = await queryClient.fetchQuery(getTokenKeyQueryOptions(token.id))
    } catch {
      return // the central handler has shown why
    }
    if (await copyText(key)) notifyCopied(key, `${token.name || 'key'}.txt`)
    else setShownKey({ key, mode: 'manual' })
  }

  const toggleStatus = (token: Token) =>
    flipStatus(updateMutation, token, TOKEN_STATUS, { enabled: t('tokens:toast.enabled'), disabled: t('tokens:toast.disabled') })

  const columns: Column<Token>[] = [
    {
      id: 'name',
      header: t('tokens:columns.name'),
      card: 'title',
      essential: true,
      cell: (token) => <TitleCell text={token.name} testId="token-name" sub={token.key} />,
    },
    { id: 'status', header: t('tokens:columns.status'), cell: (token) => <TokenStatusBadge status={token.status} /> },
    {
      id: 'remain',
      header: t('tokens:columns.remainQuota'),
      testId: 'token-remain',
      cell: (token) => (token.unlimited_quota ? t('tokens:unlimited') : renderQuota(token.remain_quota, display)),
    },
    { id: 'used', header: t('tokens:columns.usedQuota'), testId: 'token-used', cell: (token) => renderQuota(token.used_quota, display) },
    { id: 'created', header: t('tokens:columns.createdAt'), className: 'whitespace-nowrap', cell: (token) => formatTimestamp(token.created_at) },
    {
      id: 'expiry',
      header: t('tokens:columns.expiredAt'),
      className: 'whitespace-nowrap',
      testId: 'token-expiry',
      cell: (token) => (token.expired_at === -1 ? t('tokens:never') : formatTimestamp(token.expired_at)),
    },
    actionsColumn(t('tokens:columns.actions'), (token) => (
      <>
        <RowAction label={t('tokens:actions.copyKey')} onClick={() => void copyKey(token)} testId="token-copy">
          <CopyIcon />
        </RowAction>
        <ChatLinksMenu tokenId={token.id} tokenName={token.name} />
        <EditAction onClick={() => list.form.edit(token)} testId="token-edit" />
        <ToggleAction
          enabled={token.status === TOKEN_STATUS.enabled}
          onClick={() => toggleStatus(token)}
          disabled={updateMutation.isPending}
          testId="token-toggle"
        />
        <DeleteAction onClick={() => list.setDeleting(token)} testId="token-delete" />
      </>
    )),
  ]

  return (
    <div className="grid grid-cols-1 gap-4">
      <FilterBar
        onSearch={list.search}
        actions={<CreateButton label={t('tokens:create')} onClick={list.form.create} testId="token-create" />}
      >
        <SearchInput {...list.bind('keyword')} placeholder={t('tokens:search.placeholder')} data-testid="token-search" />
      </FilterBar>

      <DataTable name="token" columns={columns} query={tokens} list={list} settings emptyText={list.filtered ? t('tokens:noMatch') : t('tokens:empty')} />

      <TokenFormDialog
        open={list.form.open}
        onOpenChange={list.form.onOpenChange}
        token={list.form.editing}
        onCreated={(created) => setShownKey({ key: created.key, mode: 'created' })}
      />
      <TokenKeyDialog tokenKey={shownKey?.key ?? null} mode={shownKey?.mode ?? 'created'} onClose={() => setShownKey(null)} />
      <ConfirmDialog
        {...list.deleteDialog}
        title={t('tokens:delete.title')}
        description={t('tokens:delete.description', { name: list.deleting?.name ?? '' })}
        onConfirm={list.confirmDelete((row, done) => deleteMutation.mutate(row.id, done), t('tokens:toast.deleted'), rows.length)}
        pending={deleteMutation.isPending}
        testId="token-delete-dialog"
        confirmTestId="token-delete-confirm"
      />
    </div>
  )
}
