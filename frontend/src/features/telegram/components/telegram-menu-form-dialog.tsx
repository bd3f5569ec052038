import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm, useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { Textarea } from '@/components/ui/textarea'
import { cn } from '@/lib/utils'
import { notify } from '@/lib/toast'
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
  const form = useForm<TelegramMenuFormValues, unknown, TelegramMenuPayload>({
    resolver: zodResolver(schema),
    defaultValues: telegramMenuFormDefaults(menu),
  })
  const createMutation = useCreateTelegramMenu()
  const updateMutation = useUpdateTelegramMenu()
  const pending = createMutation.isPending || updateMutation.isPending

  useEffect(() => {
    if (open) form.reset(telegramMenuFormDefaults(menu))
  }, [open, menu, form])

  const [description, reply] = useWatch({ control: form.control, name: ['description', 'reply_message'] })
  const replyCount = charCount(reply)

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      if (menu) {
        await updateMutation.mutateAsync({ id: menu.id, ...payload })
        notify.success(t('telegram:toast.updated'))
      } else {
        await createMutation.mutateAsync(payload)
        notify.success(t('telegram:toast.created'))
      }
      onSaved?.()
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-2xl" data-testid="telegram-form-dialog">
        <DialogHeader>
          <DialogTitle>{menu ? t('telegram:form.editTitle') : t('telegram:form.createTitle')}</DialogTitle>
          <DialogDescription>{t('telegram:form.description')}</DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4 sm:grid-cols-2" data-testid="telegram-form">
            <FormField
              control={form.control}
              name="command"
              render={({ field }) => (
                <FormItem>
                  <FormLabel>{t('telegram:form.command')}</FormLabel>
                  <FormControl>
                    <Input
                      autoComplete="off"
                      autoCapitalize="none"
                      spellCheck={false}
                      className="font-mono"
                      placeholder={t('telegram:form.commandPlaceholder')}
                      {...field}
                    />
                  </FormControl>
                  <FormDescription>{t('telegram:form.commandHint', { max: COMMAND_MAX })}</FormDescription>
                  <FormMessage />
                </FormItem>
              )}
            />
            <FormField
              control={form.control}
              name="parse_mode"
              render={({ field }) => (
                <FormItem>
                  <FormLabel>{t('telegram:form.parseMode')}</FormLabel>
                  <FormControl>
                    <NativeSelect {...field} data-testid="telegram-parse-mode">
                      {PARSE_MODES.map((mode) => (
                        <option key={mode} value={mode}>
                          {mode === '' ? t('telegram:parseMode.plain') : mode}
                        </option>
                      ))}
                    </NativeSelect>
                  </FormControl>
                  <FormDescription>{t('telegram:form.parseModeHint')}</FormDescription>
                  <FormMessage />
                </FormItem>
              )}
            />
            <FormField
              control={form.control}
              name="description"
              render={({ field }) => (
                <FormItem className="sm:col-span-2">
                  <FormLabel>{t('telegram:form.menuDescription')}</FormLabel>
                  <FormControl>
                    <Input autoComplete="off" placeholder={t('telegram:form.menuDescriptionPlaceholder')} {...field} />
                  </FormControl>
                  <FormDescription className="flex flex-wrap justify-between gap-x-3">
                    <span>{t('telegram:form.menuDescriptionHint')}</span>
                    <span className={cn('tabular-nums', charCount(description) > DESCRIPTION_MAX && 'text-destructive')}>
                      {t('telegram:form.count', { count: charCount(description), max: DESCRIPTION_MAX })}
                    </span>
                  </FormDescription>
                  <FormMessage />
                </FormItem>
              )}
            />
            <FormField
              control={form.control}
              name="reply_message"
              render={({ field }) => (
                <FormItem className="sm:col-span-2">
                  <FormLabel>{t('telegram:form.reply')}</FormLabel>
                  <FormControl>
                    <Textarea rows={8} placeholder={t('telegram:form.replyPlaceholder')} {...field} />
                  </FormControl>
                  <FormDescription className="flex flex-wrap justify-between gap-x-3">
                    <span>{t('telegram:form.replyHint')}</span>
                    <span
                      className={cn('tabular-nums', replyCount > REPLY_MAX && 'text-destructive')}
                      data-testid="telegram-reply-count"
                    >
                      {t('telegram:form.count', { count: replyCount, max: REPLY_MAX })}
                    </span>
                  </FormDescription>
                  <FormMessage />
                </FormItem>
              )}
            />
            <DialogFooter className="sm:col-span-2">
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={pending} data-testid="telegram-form-submit">
                {pending && <Spinner />}
                {menu ? t('common:actions.save') : t('telegram:form.submitCreate')}
              </Button>
            </DialogFooter>
          </form>
        </Form>
      </DialogContent>
    </Dialog>
  )
}
