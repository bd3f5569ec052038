import { zodResolver } from '@hookform/resolvers/zod'
import { RotateCcwIcon, SaveIcon } from 'lucide-react'
import { useEffect, useMemo } from 'react'
import { useForm, useWatch } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Form } from '@/components/ui/form'
import { Spinner } from '@/components/ui/spinner'
import type { QuotaUnit } from '@/lib/format'
import { notify } from '@/lib/toast'
import { useUpdateOptions } from '../api/options'
import type { Section, SettingsTab } from '../catalogue'
import { changedOptions, createOptionsSchema, initialValues, type OptionFormValues } from '../schemas'
import type { OptionItem } from '../types'
import { OptionField } from './option-field'

/**
 * One tab of settings as one form: its sections are cards, and one Save (in a bar that stays
 * in view, with the number of unsaved changes) sends every changed key of the tab together;
 * the server writes them all or none.
 */
export function SettingsTabForm({
  tab,
  sections,
  items,
  unit,
}: {
  tab: SettingsTab
  sections: Section[]
  items: Map<string, OptionItem>
  unit: QuotaUnit
}) {
  const { t } = useTranslation()
  const defs = useMemo(() => sections.flatMap((s) => s.defs), [sections])
  const schema = useMemo(() => createOptionsSchema(defs, t, unit), [defs, t, unit])
  const initial = useMemo(() => initialValues(defs, items, unit), [defs, items, unit])
  const form = useForm<OptionFormValues>({ resolver: zodResolver(schema), defaultValues: initial })
  const mutation = useUpdateOptions()
  const { reset, control } = form

  // Read again after a save (or by another administrator): start from what is stored.
  useEffect(() => {
    reset(initial)
  }, [initial, reset])

  const values = useWatch({ control }) as OptionFormValues
  const pending = changedOptions(defs, initial, { ...initial, ...values }, unit).length

  const onSubmit = form.handleSubmit(async (v) => {
    const changes = changedOptions(defs, initial, v, unit)
    if (changes.length === 0) {
      notify.info(t('settings:toast.unchanged'))
      return
    }
    try {
      await mutation.mutateAsync(changes)
      notify.success(t('settings:toast.saved', { count: changes.length }))
    } catch {
      // Shown by the central error handler; nothing of this save was written.
    }
  })

  const title = (s: Section) => (s.id === 'unknown' ? t('settings:sections.unknown') : t(`settings:sections.${s.id}`))

  return (
    <Form {...form}>
      <form onSubmit={onSubmit} noValidate className="grid grid-cols-1 gap-4" data-testid={`settings-form-${tab}`}>
        {sections.map((s) => (
          <Card key={s.id} data-testid={`settings-section-${s.id}`}>
            <CardHeader>
              <CardTitle>
                <h2>{title(s)}</h2>
              </CardTitle>
            </CardHeader>
            <CardContent>
              <div className="grid gap-4 md:grid-cols-2">
                {s.defs.map((d) => (
                  <OptionField key={d.key} def={d} control={control} items={items} unit={unit} />
                ))}
              </div>
            </CardContent>
          </Card>
        ))}
        <div
          className="sticky bottom-0 z-10 flex flex-wrap items-center justify-end gap-3 rounded-lg border bg-card/95 p-3 shadow-md backdrop-blur"
          data-testid={`settings-bar-${tab}`}
        >
          <span className="mr-auto text-sm text-muted-foreground" role="status" data-testid={`settings-pending-${tab}`}>
            {pending > 0 ? t('settings:bar.pending', { count: pending }) : t('settings:bar.clean')}
          </span>
          <Button type="button" variant="outline" disabled={pending === 0 || mutation.isPending} onClick={() => reset(initial)} data-testid={`settings-discard-${tab}`}>
            <RotateCcwIcon />
            {t('settings:bar.discard')}
          </Button>
          <Button type="submit" disabled={mutation.isPending} data-testid={`settings-save-${tab}`}>
            {mutation.isPending ? <Spinner /> : <SaveIcon />}
            {t('common:actions.save')}
          </Button>
        </div>
      </form>
    </Form>
  )
}
