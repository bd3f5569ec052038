import { PencilIcon, PlusIcon, SearchIcon, Trash2Icon } from 'lucide-react'
import { useState, type FormEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { DataPagination } from '@/components/data-pagination'
import { ConfirmDialog, ListState, RowAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent } from '@/components/ui/card'
import { Input } from '@/components/ui/input'
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from '@/components/ui/table'
import { notify } from '@/lib/toast'
import { useDeleteTelegramMenu } from '../api/delete-menu'
import { useTelegramMenus } from '../api/get-menus'
import type { TelegramMenu } from '../types'
import { TelegramMenuFormDialog } from './telegram-menu-form-dialog'

/**
 * The bot's custom menu: search (command or description), paging, create/edit, delete. Every
 * change is shown in Telegram only after a reload (`onChanged`).
 */
export function TelegramMenuPanel({ onChanged }: { onChanged: () => void }) {
  const { t } = useTranslation()
  const [params, setParams] = useState({ page: 1, size: 10, keyword: '' })
  const [keywordInput, setKeywordInput] = useState('')
  const list = useTelegramMenus(params)

  const [formOpen, setFormOpen] = useState(false)
  const [editing, setEditing] = useState<TelegramMenu | undefined>()
  const [deleting, setDeleting] = useState<TelegramMenu | null>(null)
  const deleteMutation = useDeleteTelegramMenu()

  const onSearch = (e: FormEvent) => {
    e.preventDefault()
    setParams((p) => ({ ...p, page: 1, keyword: keywordInput.trim() }))
  }
  const openCreate = () => {
    setEditing(undefined)
    setFormOpen(true)
  }
  const openEdit = (m: TelegramMenu) => {
    setEditing(m)
    setFormOpen(true)
  }
  const confirmDelete = () => {
    if (!deleting) return
    deleteMutation.mutate(deleting.id, {
      onSuccess: () => {
        notify.success(t('telegram:toast.deleted'))
        setDeleting(null)
        onChanged()
        if (params.page > 1 && list.data?.data.length === 1) setParams((p) => ({ ...p, page: p.page - 1 }))
      },
    })
  }

  const rows = list.data?.data ?? []
  const total = list.data?.total_count ?? 0

  return (
    <section className="grid grid-cols-1 gap-4" aria-labelledby="telegram-menu-title">
      <div>
        <h2 id="telegram-menu-title" className="text-lg font-semibold">
          {t('telegram:menuList.title')}
        </h2>
        <p className="text-sm text-muted-foreground">{t('telegram:menuList.description')}</p>
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <form onSubmit={onSearch} className="flex min-w-0 flex-1 gap-2 sm:max-w-md" role="search">
          <Input
            value={keywordInput}
            onChange={(e) => setKeywordInput(e.target.value)}
            placeholder={t('telegram:search.placeholder')}
            aria-label={t('telegram:search.placeholder')}
            data-testid="telegram-search"
          />
          <Button type="submit" variant="outline">
            <SearchIcon />
            {t('common:actions.search')}
          </Button>
        </form>
        <Button onClick={openCreate} className="ml-auto" data-testid="telegram-create">
          <PlusIcon />
          {t('telegram:create')}
        </Button>
      </div>

      <Card>
        <CardContent className="p-0">
          <ListState
            loading={list.isPending}
            query={list}
            empty={rows.length === 0}
            emptyText={params.keyword ? t('telegram:noMatch') : t('telegram:empty')}
            emptyTestId="telegram-menus-empty"
          >
            <Table cards data-testid="telegram-menus-table">
              <TableHeader>
                <TableRow>
                  <TableHead>{t('telegram:columns.command')}</TableHead>
                  <TableHead>{t('telegram:columns.description')}</TableHead>
                  <TableHead>{t('telegram:columns.parseMode')}</TableHead>
                  <TableHead>{t('telegram:columns.reply')}</TableHead>
                  <TableHead data-card="actions" className="text-right">
                    {t('telegram:columns.actions')}
                  </TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {rows.map((m) => (
                  <TableRow key={m.id} data-testid={`telegram-menu-row-${m.id}`}>
                    <TableCell data-card="title">
                      <span className="font-mono font-medium" data-testid="telegram-menu-command">
                        /{m.command}
                      </span>
                    </TableCell>
                    <TableCell data-testid="telegram-menu-description">{m.description}</TableCell>
                    <TableCell>
                      <Badge variant="outline" data-testid="telegram-menu-parse-mode">
                        {m.parse_mode === '' ? t('telegram:parseMode.plain') : m.parse_mode}
                      </Badge>
                    </TableCell>
                    <TableCell>
                      <span className="line-clamp-2 max-w-72 text-sm break-words whitespace-pre-line text-muted-foreground" title={m.reply_message}>
                        {m.reply_message}
                      </span>
                    </TableCell>
                    <TableCell data-card="actions">
                      <div className="flex justify-end gap-1">
                        <RowAction label={t('common:actions.edit')} onClick={() => openEdit(m)} testId="telegram-menu-edit">
                          <PencilIcon />
                        </RowAction>
                        <RowAction
                          label={t('common:actions.delete')}
                          onClick={() => setDeleting(m)}
                          testId="telegram-menu-delete"
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

      <TelegramMenuFormDialog open={formOpen} onOpenChange={setFormOpen} menu={editing} onSaved={onChanged} />
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t('telegram:delete.title')}
        description={t('telegram:delete.description', { command: deleting?.command ?? '' })}
        confirmLabel={t('common:actions.delete')}
        onConfirm={confirmDelete}
        pending={deleteMutation.isPending}
        testId="telegram-delete-dialog"
      />
    </section>
  )
}
