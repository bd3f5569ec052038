import { zodResolver } from '@hookform/resolvers/zod'
import { useEffect, useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { Spinner } from '@/components/ui/spinner'
import { Switch } from '@/components/ui/switch'
import { Textarea } from '@/components/ui/textarea'
import { notify } from '@/lib/toast'
import { useUpdateOptions } from '../api/options'
import type { KnownKey, OptionDef, Section } from '../catalogue'
import { changedOptions, createOptionsSchema, type OptionFormValues } from '../schemas'
import type { OptionItem } from '../types'

function initialValues(defs: OptionDef[], items: Map<string, OptionItem>): OptionFormValues {
  return Object.fromEntries(
    defs.map((d) => {
      const raw = items.get(d.key)?.value ?? ''
      if (d.kind.type === 'bool') return [d.key, raw === 'true']
      if (d.kind.type === 'secret') return [d.key, '']
      return [d.key, raw]
    }),
  )
}

/** One card of settings with its own save button: only changed keys are sent. */
export function OptionSection({ section, items }: { section: Section; items: Map<string, OptionItem> }) {
  const { t } = useTranslation()
  const schema = useMemo(() => createOptionsSchema(section.defs, t), [section.defs, t])
  const initial = useMemo(() => initialValues(section.defs, items), [section.defs, items])
  const form = useForm<OptionFormValues>({ resolver: zodResolver(schema), defaultValues: initial })
  const mutation = useUpdateOptions()
  const { reset } = form

  useEffect(() => {
    reset(initial)
  }, [initial, reset])

  const onSubmit = form.handleSubmit(async (values) => {
    const changes = changedOptions(section.defs, initial, values)
    if (changes.length === 0) {
      notify.info(t('settings:toast.unchanged'))
      return
    }
    try {
      await mutation.mutateAsync(changes)
      notify.success(t('settings:toast.saved', { count: changes.length }))
    } catch {
      // Shown by the central error handler.
    }
  })

  const label = (d: OptionDef) => (d.known ? t(`settings:keys.${d.key as KnownKey}`) : d.key)
  const title = section.id === 'unknown' ? t('settings:sections.unknown') : t(`settings:sections.${section.id}`)

  return (
    <Card data-testid={`settings-section-${section.id}`}>
      <CardHeader>
        <CardTitle>
          <h2>{title}</h2>
        </CardTitle>
      </CardHeader>
      <CardContent>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid grid-cols-1 gap-4">
            <div className="grid gap-4 md:grid-cols-2">
              {section.defs.map((d) => (
                <FormField
                  key={d.key}
                  control={form.control}
                  name={d.key}
                  render={({ field }) =>
                    d.kind.type === 'bool' ? (
                      <FormItem className="flex items-center gap-3 rounded-lg border p-3">
                        <FormControl>
                          <Switch checked={field.value === true} onCheckedChange={field.onChange} />
                        </FormControl>
                        <div className="grid gap-0.5">
                          <FormLabel>{label(d)}</FormLabel>
                          <span className="font-mono text-[11px] text-muted-foreground">{d.key}</span>
                        </div>
                      </FormItem>
                    ) : (
                      <FormItem
                        className={
                          d.kind.type === 'json' || (d.kind.type === 'text' && d.kind.multiline) ? 'md:col-span-2' : undefined
                        }
                      >
                        <FormLabel>{label(d)}</FormLabel>
                        <FormControl>
                          {d.kind.type === 'json' || (d.kind.type === 'text' && d.kind.multiline) ? (
                            <Textarea
                              rows={d.kind.type === 'json' ? 6 : 4}
                              spellCheck={false}
                              className={d.kind.type === 'json' ? 'font-mono text-xs' : undefined}
                              name={field.name}
                              ref={field.ref}
                              onBlur={field.onBlur}
                              value={String(field.value ?? '')}
                              onChange={field.onChange}
                            />
                          ) : (
                            <Input
                              type={d.kind.type === 'secret' ? 'password' : d.kind.type === 'int' || d.kind.type === 'float' ? 'number' : 'text'}
                              step={d.kind.type === 'float' ? 'any' : undefined}
                              autoComplete={d.kind.type === 'secret' ? 'new-password' : 'off'}
                              placeholder={
                                d.kind.type === 'secret'
                                  ? items.get(d.key)?.set
                                    ? t('settings:secret.set')
                                    : t('settings:secret.unset')
                                  : undefined
                              }
                              name={field.name}
                              ref={field.ref}
                              onBlur={field.onBlur}
                              value={String(field.value ?? '')}
                              onChange={field.onChange}
                            />
                          )}
                        </FormControl>
                        <FormDescription className="font-mono text-[11px]">{d.key}</FormDescription>
                        <FormMessage />
                      </FormItem>
                    )
                  }
                />
              ))}
            </div>
            <div>
              <Button type="submit" disabled={mutation.isPending} data-testid={`settings-save-${section.id}`}>
                {mutation.isPending && <Spinner />}
                {t('common:actions.save')}
              </Button>
            </div>
          </form>
        </Form>
      </CardContent>
    </Card>
  )
}
