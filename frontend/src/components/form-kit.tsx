import { useEffect, useRef, type ComponentProps, type FormEventHandler, type ReactElement, type ReactNode } from 'react'
import { useForm, type Control, type ControllerRenderProps, type DefaultValues, type FieldPath, type FieldValues, type Resolver, type UseFormReturn } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { Switch } from '@/components/ui/switch'
import { notify } from '@/lib/toast'

export interface FieldProps<V extends FieldValues, N extends FieldPath<V>, T> {
  control: Control<V, unknown, T>
  name: N
  label: ReactNode
  /** A hint under the control. */
  description?: ReactNode
  className?: string
  labelClassName?: string
  descriptionClassName?: string
}

/**
 * One labelled field of a form: its label, the control `children` draws from the field, a hint,
 * and the field's message when it is wrong.
 */
export function FieldItem<V extends FieldValues, N extends FieldPath<V>, T = V>({
  control,
  name,
  label,
  description,
  className,
  labelClassName,
  descriptionClassName,
  children,
}: FieldProps<V, N, T> & { children: (field: ControllerRenderProps<V, N>) => ReactElement }) {
  return (
    <FormField
      control={control}
      name={name}
      render={({ field }) => (
        <FormItem className={className}>
          <FormLabel className={labelClassName}>{label}</FormLabel>
          <FormControl>{children(field)}</FormControl>
          {description !== undefined && <FormDescription className={descriptionClassName}>{description}</FormDescription>}
          <FormMessage />
        </FormItem>
      )}
    />
  )
}

/** A labelled text (or number, URL, …) input of a form. */
export function TextField<V extends FieldValues, N extends FieldPath<V>, T = V>({
  control,
  name,
  label,
  description,
  className,
  labelClassName,
  descriptionClassName,
  inputClassName,
  ...input
}: FieldProps<V, N, T> & Omit<ComponentProps<typeof Input>, 'name'> & { inputClassName?: string }) {
  return (
    <FieldItem {...{ control, name, label, description, className, labelClassName, descriptionClassName }}>
      {(field) => <Input className={inputClassName} {...input} {...field} />}
    </FieldItem>
  )
}

/** A labelled select of a form; `children` are its options. */
export function SelectField<V extends FieldValues, N extends FieldPath<V>, T = V>({
  control,
  name,
  label,
  description,
  className,
  labelClassName,
  descriptionClassName,
  ...select
}: FieldProps<V, N, T> & Omit<ComponentProps<typeof NativeSelect>, 'name'>) {
  return (
    <FieldItem {...{ control, name, label, description, className, labelClassName, descriptionClassName }}>
      {(field) => <NativeSelect {...field} {...select} />}
    </FieldItem>
  )
}

/**
 * A yes/no field: a switch beside its label and hint, in a bordered box; `inline`, a switch
 * followed by its label alone.
 */
export function SwitchField<V extends FieldValues, N extends FieldPath<V>, T = V>({
  control,
  name,
  label,
  description,
  inline = false,
  className = inline ? 'flex items-center gap-2' : 'flex items-start gap-3 rounded-lg border p-3',
  descriptionClassName = 'text-xs',
  testId,
}: FieldProps<V, N, T> & { testId?: string; inline?: boolean }) {
  return (
    <FormField
      control={control}
      name={name}
      render={({ field }) => (
        <FormItem className={className}>
          <FormControl>
            <Switch checked={field.value} onCheckedChange={field.onChange} data-testid={testId} />
          </FormControl>
          {inline ? (
            <FormLabel>{label}</FormLabel>
          ) : (
            <div className="grid gap-1">
              <FormLabel>{label}</FormLabel>
              {description !== undefined && <FormDescription className={descriptionClassName}>{description}</FormDescription>}
            </div>
          )}
        </FormItem>
      )}
    />
  )
}

export interface FormDialogProps<V extends FieldValues, T> {
  open: boolean
  onOpenChange: (open: boolean) => void
  title: ReactNode
  description?: ReactNode
  form: UseFormReturn<V, unknown, T>
  onSubmit: FormEventHandler<HTMLFormElement>
  pending: boolean
  /** Test ids: `${testId}-dialog` on the dialog, `${testId}` on the form, `${testId}-submit` on its button. */
  testId: string
  dialogTestId?: string
  submitTestId?: string
  /** The submit button's text: "Save" unless told. */
  submitLabel?: ReactNode
  /** Classes of the dialog (its width) and of the form (its grid). */
  className?: string
  formClassName?: string
  footerClassName?: string
  children: ReactNode
}

/** A dialog holding a form: title, description, the fields, then cancel and a submit that spins while saving. */
export function FormDialog<V extends FieldValues, T>({
  open,
  onOpenChange,
  title,
  description,
  form,
  onSubmit,
  pending,
  testId,
  dialogTestId = `${testId}-dialog`,
  submitTestId = `${testId}-submit`,
  submitLabel,
  className,
  formClassName = 'grid gap-4',
  footerClassName,
  children,
}: FormDialogProps<V, T>) {
  const { t } = useTranslation()
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className={className} data-testid={dialogTestId}>
        <DialogHeader>
          <DialogTitle>{title}</DialogTitle>
          {description && <DialogDescription>{description}</DialogDescription>}
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className={formClassName} data-testid={testId}>
            {children}
            <DialogFooter className={footerClassName}>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={pending} data-testid={submitTestId}>
                {pending && <Spinner />}
                {submitLabel ?? t('common:actions.save')}
              </Button>
            </DialogFooter>
          </form>
        </Form>
      </DialogContent>
    </Dialog>
  )
}

/**
 * The form of a create/edit dialog: filled from `defaults` each time the dialog opens (or the
 * row it edits changes), checked by `resolver`; on submit, `save` runs, `told` is said, and the
 * dialog closes, or stays open when saving failed (the central error handler says why). Gives
 * the form and what FormDialog takes.
 */
export function useFormDialog<V extends FieldValues, T, R = unknown>({
  open,
  onOpenChange,
  resolver,
  defaults,
  source,
  also,
  save,
  told,
  pending,
}: {
  open: boolean
  onOpenChange: (open: boolean) => void
  resolver: Resolver<V, unknown, T>
  defaults: () => DefaultValues<V>
  /** The row edited (undefined for a new one): the form is filled again when it changes. */
  source: unknown
  /** Something else the defaults depend on (a unit). */
  also?: unknown
  save: (values: T) => Promise<R>
  told?: string | ((result: R) => string)
  pending: boolean
}) {
  const form = useForm<V, unknown, T>({ resolver, defaultValues: defaults() })
  const initial = useRef(defaults)
  useEffect(() => {
    initial.current = defaults
  })
  useEffect(() => {
    if (open) form.reset(initial.current())
  }, [open, source, also, form])
  const onSubmit = form.handleSubmit(async (values) => {
    try {
      const result = await save(values)
      if (told) notify.success(typeof told === 'string' ? told : told(result))
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })
  return { form, dialog: { open, onOpenChange, form, onSubmit, pending } }
}
