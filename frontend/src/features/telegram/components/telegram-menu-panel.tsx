import { useTranslation } from 'react-i18next'
import { actionsColumn, DataTable, type Column } from '@/components/data-table'
import { FilterBar, SearchInput } from '@/components/filter-bar'
import { ConfirmDialog, CreateButton, DeleteAction, EditAction } from '@/components/list-kit'
import { Badge } from '@/components/ui/badge'
import { useListScreen } from '@/hooks/use-list-screen'
import { useDeleteTelegramMenu } from '../api/delete-menu'
import { useTelegramMenus } from '../api/get-menus'
import type { TelegramMenu } from '../types'
import { TelegramMenuFormDialog } from './telegram-menu-form-dialog'

const FILTERS = { keyword: '' }

/**
 * The bot's custom menu: search (command or description), paging, create/edit, delete. Every
 * change is shown in Telegram only after a reload (`onChanged`).
 */
export function TelegramMenuPanel({ onChanged }: { onChanged: () => void }) {
  const { t } = useTranslation()
  const list = useListScreen<TelegramMenu, typeof FILTERS>({ filters: FILTERS })
  const menus = useTelegramMenus(list.params)
  const rows = menus.data?.data ?? []
  const deleteMutation = useDeleteTelegramMenu()

  const columns: Column<TelegramMenu>[] = [
    {
      id: 'command',
      header: t('telegram:columns.command'),
      card: 'title',
      essential: true,
      cell: (m) => (
        <span className="font-mono font-medium" data-testid="telegram-menu-command">
          /{m.command}
        </span>
      ),
    },
    { id: 'description', header: t('telegram:columns.description'), testId: 'telegram-menu-description', cell: (m) => m.description },
    {
      id: 'parseMode',
      header: t('telegram:columns.parseMode'),
      cell: (m) => (
        <Badge variant="outline" data-testid="telegram-menu-parse-mode">
          {m.parse_mode === '' ? t('telegram:parseMode.plain') : m.parse_mode}
        </Badge>
      ),
    },
    {
      id: 'reply',
      header: t('telegram:columns.reply'),
      cell: (m) => (
        <span className="line-clamp-2 max-w-72 text-sm break-words whitespace-pre-line text-muted-foreground" title={m.reply_message}>
          {m.reply_message}
        </span>
      ),
    },
    actionsColumn(t('telegram:columns.actions'), (m) => (
      <>
        <EditAction onClick={() => list.form.edit(m)} testId="telegram-menu-edit" />
        <DeleteAction onClick={() => list.setDeleting(m)} testId="telegram-menu-delete" />
      </>
    )),
  ]

  return (
    <section className="grid grid-cols-1 gap-4" aria-labelledby="telegram-menu-title">
      <div>
        <h2 id="telegram-menu-title" className="text-lg font-semibold">
          {t('telegram:menuList.title')}
        </h2>
        <p className="text-sm text-muted-foreground">{t('telegram:menuList.description')}</p>
      </div>
      <FilterBar
        onSearch={list.search}
        actions={<CreateButton label={t('telegram:create')} onClick={list.form.create} testId="telegram-create" />}
      >
        <SearchInput {...list.bind('keyword')} placeholder={t('telegram:search.placeholder')} data-testid="telegram-search" />
      </FilterBar>

      <DataTable name="telegram-menu" columns={columns} query={menus} list={list} emptyText={list.filtered ? t('telegram:noMatch') : t('telegram:empty')} />

      <TelegramMenuFormDialog open={list.form.open} onOpenChange={list.form.onOpenChange} menu={list.form.editing} onSaved={onChanged} />
      <ConfirmDialog
        {...list.deleteDialog}
        title={t('telegram:delete.title')}
        description={t('telegram:delete.description', { command: list.deleting?.command ?? '' })}
        onConfirm={list.confirmDelete(
          (m, done) =>
            deleteMutation.mutate(m.id, {
              onSuccess: () => {
                onChanged()
                done.onSuccess()
              },
            }),
          t('telegram:toast.deleted'),
          rows.length,
        )}
        pending={deleteMutation.isPending}
        testId="telegram-delete-dialog"
      />
    </section>
  )
}
