import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { FieldItem, FormDialog, SelectField, TextField, useFormDialog } from '@/components/form-kit'
import { Textarea } from '@/components/ui/textarea'
import { cn } from '@/lib/utils'
import { useCreateTelegramMenu } from '../api/create-menu'
import { useUpdateTelegramMenu } from '../api/update-menu'
import {
  COMMAND_MAX,
  DESCRIPTION_MAX,
  REPLY_MAX,
  charCount,
  createTelegramMenuSchema,
  telegramMenuFormDefaults,
  type TelegramMenuFormValues,
} from '../schemas'
import { PARSE_MODES, type TelegramMenu, type TelegramMenuPayload } from '../types'

export interface TelegramMenuFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The entry to edit; none creates one. */
  menu?: TelegramMenu
  /** After a create or an update: Telegram shows the new menu only after a reload. */
  onSaved?: () => void
}

/** Create or edit a menu command: the command, its description, the reply and how it is formatted. */
export function TelegramMenuFormDialog({ open, onOpenChange, menu, onSaved }: TelegramMenuFormDialogProps) {
  const { t } = useTranslation()
  const schema = useMemo(() => createTelegramMenuSchema(t), [t])
  const createMutation = useCreateTelegramMenu()
  const updateMutation = useUpdateTelegramMenu()
  const { form, dialog } = useFormDialog<TelegramMenuFormValues, TelegramMenuPayload>({
    open,
    onOpenChange,
    resolver: zodResolver(schema),
    defaults: () => telegramMenuFormDefaults(menu),
    source: menu,
    save: async (payload) => {
      if (menu) await updateMutation.mutateAsync({ id: menu.id, ...payload })
      else await createMutation.mutateAsync(payload)
      onSaved?.()
    },
    told: menu ? t('telegram:toast.updated') : t('telegram:toast.created'),
    pending: createMutation.isPending || updateMutation.isPending,
  })

  const [description, reply] = useWatch({ control: form.control, name: ['description', 'reply_message'] })
  const replyCount = charCount(reply)

  const counted = 'flex flex-wrap justify-between gap-x-3'
  return (
    <FormDialog
      {...dialog}
      title={menu ? t('telegram:form.editTitle') : t('telegram:form.createTitle')}
      description={t('telegram:form.description')}
      testId="telegram-form"
      submitLabel={menu ? t('common:actions.save') : t('telegram:form.submitCreate')}
      className="max-w-2xl"
      formClassName="grid gap-4 sm:grid-cols-2"
      footerClassName="sm:col-span-2"
    >
      <TextField
        control={form.control}
        name="command"
        label={t('telegram:form.command')}
        description={t('telegram:form.commandHint', { max: COMMAND_MAX })}
        autoComplete="off"
        autoCapitalize="none"
        spellCheck={false}
        inputClassName="font-mono"
        placeholder={t('telegram:form.commandPlaceholder')}
      />
      <SelectField control={form.control} name="parse_mode" label={t('telegram:form.parseMode')} description={t('telegram:form.parseModeHint')} data-testid="telegram-parse-mode">
        {PARSE_MODES.map((mode) => (
          <option key={mode} value={mode}>
            {mode === '' ? t('telegram:parseMode.plain') : mode}
          </option>
        ))}
      </SelectField>
      <TextField
        control={form.control}
        name="description"
        label={t('telegram:form.menuDescription')}
        className="sm:col-span-2"
        descriptionClassName={counted}
        description={
          <>
            <span>{t('telegram:form.menuDescriptionHint')}</span>
            <span className={cn('tabular-nums', charCount(description) > DESCRIPTION_MAX && 'text-destructive')}>
              {t('telegram:form.count', { count: charCount(description), max: DESCRIPTION_MAX })}
            </span>
          </>
        }
        autoComplete="off"
        placeholder={t('telegram:form.menuDescriptionPlaceholder')}
      />
      <FieldItem
        control={form.control}
        name="reply_message"
        label={t('telegram:form.reply')}
        className="sm:col-span-2"
        descriptionClassName={counted}
        description={
          <>
            <span>{t('telegram:form.replyHint')}</span>
            <span className={cn('tabular-nums', replyCount > REPLY_MAX && 'text-destructive')} data-testid="telegram-reply-count">
              {t('telegram:form.count', { count: replyCount, max: REPLY_MAX })}
            </span>
          </>
        }
      >
        {(field) => <Textarea rows={8} placeholder={t('telegram:form.replyPlaceholder')} {...field} />}
      </FieldItem>
    </FormDialog>
  )
}
