import { ArrowDownIcon, ArrowUpIcon, PlusIcon, Trash2Icon } from 'lucide-react'
import type { Control } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { RowAction } from '@/components/list-kit'
import { Button } from '@/components/ui/button'
import { FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Switch } from '@/components/ui/switch'
import { Textarea } from '@/components/ui/textarea'
import { formatAmount, parseQuotaText, renderNumber, type QuotaUnit } from '@/lib/format'
import { LANGUAGES } from '@/lib/i18n'
import { isHintedKey, type KnownKey, type OptionDef } from '../catalogue'
import { parseChatLinkRows, type ChatLinkRow, type OptionFormValues } from '../schemas'
import type { OptionItem } from '../types'

/** Whether a setting takes the whole width of its section. */
function isWide(d: OptionDef): boolean {
  const k = d.kind
  return k.type === 'json' || k.type === 'chatLinks' || (k.type === 'text' && k.multiline === true)
}

/** The other unit of a quota field: "= 500,000 quota" under dollars, "≈ $1.00" under units. */
function QuotaHint({ text, unit }: { text: string; unit: QuotaUnit }) {
  const { t } = useTranslation()
  const quota = parseQuotaText(text, unit)
  if (Number.isNaN(quota)) return null
  return (
    <span data-testid="quota-hint">
      {unit.dollars
        ? t('settings:quotaHint.units', { quota: quota.toLocaleString() })
        : t('settings:quotaHint.dollars', { amount: formatAmount(quota / unit.perUnit), short: renderNumber(quota) })}
    </span>
  )
}

/**
 * The chat-client list as rows (name, address template, shown, order) instead of raw JSON. The
 * form value stays the JSON text the server stores.
 */
function ChatLinksEditor({ value, onChange, id }: { value: string; onChange: (v: string) => void; id: string }) {
  const { t } = useTranslation()
  const parsed = parseChatLinkRows(value)
  if (!parsed) {
    // Not a list the editor can read (edited by hand): the text, so it can be fixed.
    return <Textarea id={id} rows={6} spellCheck={false} className="font-mono text-xs" value={value} onChange={(e) => onChange(e.target.value)} />
  }
  // Shown in their order; written back numbered 1..n in the order shown.
  const rows = [...parsed].sort((a, b) => a.sort - b.sort)
  const write = (next: ChatLinkRow[]) => onChange(JSON.stringify(next.map((r, i) => ({ ...r, sort: i + 1 }))))
  const patch = (i: number, p: Partial<ChatLinkRow>) => write(rows.map((r, j) => (j === i ? { ...r, ...p } : r)))
  const move = (i: number, by: number) => {
    const next = [...rows]
    next.splice(i + by, 0, ...next.splice(i, 1))
    write(next)
  }
  return (
    <div className="grid gap-2" id={id} data-testid="chat-links-editor">
      {rows.length === 0 && <p className="text-sm text-muted-foreground">{t('settings:chatLinks.empty')}</p>}
      {rows.map((r, i) => (
        <div key={i} className="grid gap-2 rounded-lg border p-2 sm:grid-cols-[10rem_1fr_auto]" data-testid="chat-link-row">
          <Input
            aria-label={t('settings:chatLinks.name')}
            placeholder={t('settings:chatLinks.name')}
            value={r.name}
            onChange={(e) => patch(i, { name: e.target.value })}
          />
          <Input
            aria-label={t('settings:chatLinks.url')}
            placeholder="https://app.example/#/?key={key}&url={server}"
            className="font-mono text-xs"
            value={r.url}
            onChange={(e) => patch(i, { url: e.target.value })}
          />
          <div className="flex items-center justify-end gap-1">
            <label className="mr-1 flex items-center gap-1.5 text-xs text-muted-foreground">
              <Switch checked={r.show} onCheckedChange={(show) => patch(i, { show })} aria-label={t('settings:chatLinks.show')} />
              {t('settings:chatLinks.show')}
            </label>
            <RowAction label={t('settings:chatLinks.up')} testId="chat-link-up" disabled={i === 0} onClick={() => move(i, -1)}>
              <ArrowUpIcon />
            </RowAction>
            <RowAction label={t('settings:chatLinks.down')} testId="chat-link-down" disabled={i === rows.length - 1} onClick={() => move(i, 1)}>
              <ArrowDownIcon />
            </RowAction>
            <RowAction
              label={t('settings:chatLinks.remove')}
              testId="chat-link-remove"
              className="text-destructive"
              onClick={() => write(rows.filter((_, j) => j !== i))}
            >
              <Trash2Icon />
            </RowAction>
          </div>
        </div>
      ))}
      <div>
        <Button
          type="button"
          variant="outline"
          size="sm"
          onClick={() => write([...rows, { name: '', url: '', show: true, sort: rows.length + 1 }])}
          data-testid="chat-link-add"
        >
          <PlusIcon />
          {t('settings:chatLinks.add')}
        </Button>
      </div>
    </div>
  )
}

/** One setting's input, by its kind. */
export function OptionField({
  def: d,
  control,
  items,
  unit,
}: {
  def: OptionDef
  control: Control<OptionFormValues>
  items: Map<string, OptionItem>
  unit: QuotaUnit
}) {
  const { t } = useTranslation()
  const label = d.known ? t(`settings:keys.${d.key as KnownKey}`) : d.key
  return (
    <FormField
      control={control}
      name={d.key}
      render={({ field }) => {
        const text = String(field.value ?? '')
        const common = { name: field.name, ref: field.ref, onBlur: field.onBlur }
        if (d.kind.type === 'bool') {
          return (
            <FormItem className="flex items-center gap-3 rounded-lg border p-3">
              <FormControl>
                <Switch checked={field.value === true} onCheckedChange={field.onChange} />
              </FormControl>
              <div className="grid gap-0.5">
                <FormLabel>{label}</FormLabel>
                <span className="font-mono text-[11px] text-muted-foreground">{d.key}</span>
                {d.known && isHintedKey(d.key) && (
                  <FormDescription className="text-xs break-words" data-testid={`option-hint-${d.key}`}>
                    {t(`settings:hints.${d.key}`)}
                  </FormDescription>
                )}
              </div>
            </FormItem>
          )
        }
        let input
        switch (d.kind.type) {
          case 'json':
          case 'text':
            input =
              d.kind.type === 'json' || d.kind.multiline ? (
                <Textarea
                  rows={d.kind.type === 'json' ? 6 : 4}
                  spellCheck={false}
                  className={d.kind.type === 'json' ? 'font-mono text-xs' : undefined}
                  {...common}
                  value={text}
                  onChange={field.onChange}
                />
              ) : (
                <Input autoComplete="off" {...common} value={text} onChange={field.onChange} />
              )
            break
          case 'language':
            input = (
              <NativeSelect {...common} value={text} onChange={field.onChange}>
                {!(LANGUAGES as readonly string[]).includes(text) && <option value={text}>{text}</option>}
                {LANGUAGES.map((l) => (
                  <option key={l} value={l}>
                    {t(`common:language.${l}`)}
                  </option>
                ))}
              </NativeSelect>
            )
            break
          case 'chatLinks':
            input = <ChatLinksEditor id={field.name} value={text} onChange={field.onChange} />
            break
          case 'quota':
            input = (
              <div className="relative">
                {unit.dollars && <span className="pointer-events-none absolute top-1/2 left-3 -translate-y-1/2 text-sm text-muted-foreground">$</span>}
                <FormControl>
                  <Input inputMode="decimal" autoComplete="off" className={unit.dollars ? 'pl-6' : undefined} {...common} value={text} onChange={field.onChange} />
                </FormControl>
              </div>
            )
            break
          default:
            input = (
              <Input
                type={
                  d.kind.type === 'secret'
                    ? 'password'
                    : d.kind.type === 'int' || d.kind.type === 'float' || d.kind.type === 'ratio'
                      ? 'number'
                      : 'text'
                }
                step={d.kind.type === 'float' || d.kind.type === 'ratio' ? 'any' : undefined}
                autoComplete={d.kind.type === 'secret' ? 'new-password' : 'off'}
                placeholder={d.kind.type === 'secret' ? (items.get(d.key)?.set ? t('settings:secret.set') : t('settings:secret.unset')) : undefined}
                {...common}
                value={text}
                onChange={field.onChange}
              />
            )
        }
        return (
          <FormItem className={isWide(d) ? 'md:col-span-2' : undefined}>
            <FormLabel>{label}</FormLabel>
            {/* The editor is a group of inputs, and the money field wraps its own control. */}
            {d.kind.type === 'chatLinks' || d.kind.type === 'quota' ? input : <FormControl>{input}</FormControl>}
            <FormDescription className="flex flex-wrap justify-between gap-x-3 text-[11px]">
              <span className="font-mono">{d.key}</span>
              {d.kind.type === 'quota' && <QuotaHint text={text} unit={unit} />}
              {d.kind.type === 'chatLinks' && <span>{t('settings:chatLinks.placeholders')}</span>}
              {d.known && isHintedKey(d.key) && (
                <span className="basis-full text-xs break-words" data-testid={`option-hint-${d.key}`}>
                  {t(`settings:hints.${d.key}`)}
                </span>
              )}
            </FormDescription>
            <FormMessage />
          </FormItem>
        )
      }}
    />
  )
}
