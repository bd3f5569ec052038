import { useQueryClient } from '@tanstack/react-query'
import { CopyIcon, PencilIcon, PlusIcon, PowerIcon, PowerOffIcon, SearchIcon, Trash2Icon } from 'lucide-react'
import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ListState, RowAction } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Input } from '@/components/ui/input'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { copyText } from '@/lib/clipboard'
import { formatTimestamp, renderQuota } from '@/lib/format'
import { notify, notifyCopied } from '@/lib/toast'
import { useSiteInfo } from '@/stores/site'
import { TOKEN_STATUS, type Token } from '@/types/api'
import { useDeleteToken } from '../api/delete-token'
import { ChatLinksMenu } from './chat-links-menu'
import { getTokenKeyQueryOptions } from '../api/get-token-key'
import { useTokens } from '../api/get-tokens'
import { useUpdateToken } from '../api/update-token'
import { TokenFormDialog } from './token-form-dialog'
import { TokenKeyDialog } from './token-key-dialog'
import { TokenStatusBadge } from './token-status-badge'

/** The tokens screen: search, list with paging, create/edit, enable/disable, delete, copy key. */
export function TokensPanel() {
  const { t } = useTranslation()
  const queryClient = useQueryClient()
  const { display_in_currency, quota_per_unit } = useSiteInfo()
  const display = { displayInCurrency: display_in_currency, quotaPerUnit: quota_per_unit }

  const [params, setParams] = useState({ page: 1, size: 10, keyword: '' })
  const [keywordInput, setKeywordInput] = useState('')
  const tokens = useTokens(params)

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<Token | undefined>()
  const [shownKey, setShownKey] = useState<{ key: string; mode: 'created' | 'manual' } | null>(null)
  const [deleting, setDeleting] = useState<Token | null>(null)

  const updateMutation = useUpdateToken()
  const deleteMutation = useDeleteToken()

  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    setParams((p) => ({ ...p, page: 1, keyword: keywordInput.trim() }))
  }

  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (token: Token) => {
    setEditing(token)
    setFormOpen(true)
  }

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

  const toggleStatus = (token: Token) => {
    const status = token.status === TOKEN_STATUS.enabled ? TOKEN_STATUS.disabled : TOKEN_STATUS.enabled
    updateMutation.mutate(
      { id: token.id, status },
      {
        onSuccess: () =>
          notify.success(status === TOKEN_STATUS.enabled ? t('tokens:toast.enabled') : t('tokens:toast.disabled')),
      },
    )
  }

  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting.id, {
      onSuccess: () => {
        notify.success(t('tokens:toast.deleted'))
        setDeleting(null)
        // Deleting the last row of a page goes back one page.
        if (params.page > 1 && tokens.data?.data.length === 1) setParams((p) => ({ ...p, page: p.page - 1 }))
      },
    })
  }

  const rows = tokens.data?.data ?? []
  const total = tokens.data?.total_count ?? 0

  return (
    <div className="grid grid-cols-1 gap-4">
      <div className="flex flex-wrap items-center gap-2">
        <form onSubmit={onSearch} className="flex min-w-0 flex-1 gap-2 sm:max-w-md" role="search">
          <Input
            value={keywordInput}
            onChange={(e) => setKeywordInput(e.target.value)}
            placeholder={t('tokens:search.placeholder')}
            aria-label={t('tokens:search.placeholder')}
            data-testid="token-search"
          />
          <Button type="submit" variant="outline">
            <SearchIcon />
            {t('common:actions.search')}
          </Button>
        </form>
        <Button onClick={openCreate} className="ml-auto" data-testid="token-create">
          <PlusIcon />
          {t('tokens:create')}
        </Button>
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={tokens.isPending}
            query={tokens}
            empty={rows.length === 0}
            emptyText={params.keyword ? t('tokens:noMatch') : t('tokens:empty')}
            emptyTestId="tokens-empty"
          >
            <Table cards data-testid="tokens-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('tokens:columns.name')}</TableHead>
                  <TableHead>{t('tokens:columns.status')}</TableHead>
                  <TableHead>{t('tokens:columns.remainQuota')}</TableHead>
                  <TableHead>{t('tokens:columns.usedQuota')}</TableHead>
                  <TableHead>{t('tokens:columns.createdAt')}</TableHead>
                  <TableHead>{t('tokens:columns.expiredAt')}</TableHead>
                  <TableHead data-card="actions" className="text-right">{t('tokens:columns.actions')}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((token) => (
                  <TableRow key={token.id} data-testid={`token-row-${token.id}`}>
                    <TableCell data-card="title">
                      <div className="font-medium" data-testid="token-name">
                        {token.name}
                      </div>
                      <div className="font-mono text-xs text-muted-foreground">{token.key}</div>
                    </TableCell>
                    <TableCell>
                      <TokenStatusBadge status={token.status} />
                    </TableCell>
                    <TableCell data-testid="token-remain">
                      {token.unlimited_quota ? t('tokens:unlimited') : renderQuota(token.remain_quota, display)}
                    </TableCell>
                    <TableCell data-testid="token-used">{renderQuota(token.used_quota, display)}</TableCell>
                    <TableCell className="whitespace-nowrap">{formatTimestamp(token.created_at)}</TableCell>
                    <TableCell className="whitespace-nowrap" data-testid="token-expiry">
                      {token.expired_at === -1 ? t('tokens:never') : formatTimestamp(token.expired_at)}
                    </TableCell>
                    <TableCell data-card="actions">
                      <div className="flex justify-end gap-1">
                        <RowAction label={t('tokens:actions.copyKey')} onClick={() => void copyKey(token)} testId="token-copy">
                          <CopyIcon />
                        </RowAction>
                        <ChatLinksMenu tokenId={token.id} tokenName={token.name} />
                        <RowAction label={t('common:actions.edit')} onClick={() => openEdit(token)} testId="token-edit">
                          <PencilIcon />
                        </RowAction>
                        <RowAction
                          label={
                            token.status === TOKEN_STATUS.enabled ? t('common:actions.disable') : t('common:actions.enable')
                          }
                          onClick={() => toggleStatus(token)}
                          disabled={updateMutation.isPending}
                          testId="token-toggle"
                        >
                          {token.status === TOKEN_STATUS.enabled ? <PowerOffIcon /> : <PowerIcon />}
                        </RowAction>
                        <RowAction
                          label={t('common:actions.delete')}
                          onClick={() => setDeleting(token)}
                          testId="token-delete"
                          className="text-destructive hover:text-destructive"
                        >
                          <Trash2Icon />
                        </RowAction>
                      </div>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ListState>
        </CardContent>
      </Card>

      {total > 0 && (
        <DataPagination
          page={params.page}
          size={params.size}
          total={total}
          onPageChange={(page) => setParams((p) => ({ ...p, page }))}
          onSizeChange={(size) => setParams((p) => ({ ...p, size, page: 1 }))}
        />
      )}

      <TokenFormDialog
        open={formOpen}
        onOpenChange={setFormOpen}
        token={editing}
        onCreated={(created) => setShownKey({ key: created.key, mode: 'created' })}
      />
      <TokenKeyDialog tokenKey={shownKey?.key ?? null} mode={shownKey?.mode ?? 'created'} onClose={() => setShownKey(null)} />

      <Dialog open={deleting !== null} onOpenChange={(open) => !open && setDeleting(null)}>
        <DialogContent closeLabel={t('common:actions.close')} data-testid="token-delete-dialog">
          <DialogHeader>
            <DialogTitle>{t('tokens:delete.title')}</DialogTitle>
            <DialogDescription>{t('tokens:delete.description', { name: deleting?.name ?? '' })}</DialogDescription>
          </DialogHeader>
          <DialogFooter>
            <Button variant="outline" onClick={() => setDeleting(null)}>
              {t('common:actions.cancel')}
            </Button>
            <Button
              variant="destructive"
              onClick={confirmDelete}
              disabled={deleteMutation.isPending}
              data-testid="token-delete-confirm"
            >
              {t('common:actions.delete')}
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </div>
  )
}

