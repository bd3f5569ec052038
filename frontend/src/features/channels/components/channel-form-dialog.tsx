import { zodResolver } from '@hookform/resolvers/zod'
import { DownloadIcon } from 'lucide-react'
import { Fragment, useEffect, useMemo, useState, type ReactNode } from 'react'
import { useForm, useWatch, type ControllerRenderProps } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { Form, FormControl, FormDescription, FormField, FormItem, FormLabel, FormMessage } from '@/components/ui/form'
import { Input } from '@/components/ui/input'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { Switch } from '@/components/ui/switch'
import { Textarea } from '@/components/ui/textarea'
import { notify } from '@/lib/toast'
import { useUser } from '@/stores/session'
import { ROLE } from '@/types/api'
import { useFetchUpstreamModels } from '../api/fetch-models'
import { useChannelSwitches } from '../api/get-switches'
import { useCreateChannels, useUpdateChannel } from '../api/save-channel'
import {
  ANTHROPIC_BETA_MAX,
  AZURE_DEFAULT_API_VERSION,
  channelFormDefaults,
  createChannelSchema,
  KNOWLEDGE_PLACEHOLDERS,
  KNOWLEDGE_TEMPLATE_MAX,
  mergeMapping,
  PLUGIN_EXAMPLE,
  shortenFetchedModels,
  splitList,
  type AffixMode,
  TTS_VOICES,
  VERTEX_DEFAULT_REGION,
  type ChannelFormValues,
  type ChannelPayload,
} from '../schemas'
import {
  CHANNEL_TYPES,
  KLING,
  KLING_MODELS,
  keyFormat,
  needsBaseUrl,
  servesChat,
  speaksOpenAi,
  takesAnthropicBeta,
  usesRegion,
  type Channel,
} from '../types'

/** The form fields edited as text. */
type TextField = { [K in keyof ChannelFormValues]: ChannelFormValues[K] extends string ? K : never }[keyof ChannelFormValues]

export interface ChannelFormDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The channel to edit; none creates one (or one per key line). */
  channel?: Channel
}

/** Create or edit a channel with every field. Server refusals are toasted centrally; the form stays open. */
export function ChannelFormDialog({ open, onOpenChange, channel }: ChannelFormDialogProps) {
  const { t } = useTranslation()
  const editing = channel !== undefined
  // Only root reads keys, so only root moves a stored key to a new destination (the server
  // refuses it otherwise with `destination_needs_root`).
  const isRoot = useUser()?.role === ROLE.root
  // The provider switches of each type, read when a form first opens and kept.
  const switches = useChannelSwitches(open)
  const switchMap = switches.data
  const schema = useMemo(
    () => createChannelSchema(t, editing, channel?.config, (typeId) => (switchMap ? (switchMap.get(typeId) ?? []) : undefined)),
    [t, editing, channel, switchMap],
  )
  const form = useForm<ChannelFormValues, unknown, ChannelPayload>({
    resolver: zodResolver(schema),
    defaultValues: channelFormDefaults(channel),
  })
  const createMutation = useCreateChannels()
  const updateMutation = useUpdateChannel()
  const fetchModels = useFetchUpstreamModels()
  const pending = createMutation.isPending || updateMutation.isPending

  useEffect(() => {
    if (open) form.reset(channelFormDefaults(channel))
  }, [open, channel, form])

  const [typeText, keyText] = useWatch({ control: form.control, name: ['type', 'key'] })
  const type = CHANNEL_TYPES.find((x) => x.id === Number(typeText))
  const typeSwitches = switchMap?.get(Number(typeText)) ?? []
  const [knowledgeMark, questionMark] = KNOWLEDGE_PLACEHOLDERS
  const keyCount = keyText.split('\n').filter((k) => k.trim()).length
  // A type whose key is not a single API key says how to write it.
  const typeKeyFormat = type ? keyFormat(type.id) : undefined

  const onSubmit = form.handleSubmit(async (payload) => {
    try {
      if (channel) {
        // The schema keeps the channel's other config settings (see `channelConfig`).
        await updateMutation.mutateAsync({ id: channel.id, ...payload })
        notify.success(t('channels:toast.updated'))
      } else {
        const { count } = await createMutation.mutateAsync(payload)
        notify.success(t('channels:toast.created', { count }))
      }
      onOpenChange(false)
    } catch {
      // Shown by the central error handler.
    }
  })

  // Prefix/suffix handling of fetched model ids (offered under a shorter name, mapped to the id).
  const [affix, setAffix] = useState('')
  const [affixMode, setAffixMode] = useState<AffixMode>('prefix')
  useEffect(() => {
    if (open) setAffix('')
  }, [open])

  const onFetchModels = () => {
    if (!channel) return
    fetchModels.mutate(channel.id, {
      onSuccess: (ids) => {
        const { models, mapping } = shortenFetchedModels(ids, affix.trim(), affixMode)
        const mappingText = mergeMapping(form.getValues('model_mapping'), mapping)
        if (mappingText === null && Object.keys(mapping).length > 0) {
          form.setError('model_mapping', { message: t('channels:validation.json') })
          return
        }
        const merged = splitList([form.getValues('models'), ...models].join(','))
        form.setValue('models', merged.join(','), { shouldDirty: true, shouldValidate: true })
        if (mappingText !== null && Object.keys(mapping).length > 0)
          form.setValue('model_mapping', mappingText, { shouldDirty: true, shouldValidate: true })
        notify.success(t('channels:toast.modelsFetched', { count: ids.length }))
      },
    })
  }

  const field = (
    name: TextField,
    label: string,
    render: (props: ControllerRenderProps<ChannelFormValues, TextField>) => ReactNode,
    hint?: ReactNode,
    className?: string,
  ) => (
    <FormField
      control={form.control}
      name={name}
      render={({ field: f }) => (
        <FormItem className={className}>
          <FormLabel>{label}</FormLabel>
          <FormControl>{render(f)}</FormControl>
          {hint && <FormDescription>{hint}</FormDescription>}
          <FormMessage />
        </FormItem>
      )}
    />
  )

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-2xl" data-testid="channel-form-dialog">
        <DialogHeader>
          <DialogTitle>{channel ? t('channels:form.editTitle', { name: channel.name }) : t('channels:form.createTitle')}</DialogTitle>
          <DialogDescription>{t('channels:form.description')}</DialogDescription>
        </DialogHeader>
        <Form {...form}>
          <form onSubmit={onSubmit} noValidate className="grid gap-4" data-testid="channel-form">
            <div className="grid gap-4 sm:grid-cols-2">
              {field('name', t('channels:form.name'), (p) => (
                <Input autoComplete="off" placeholder={t('channels:form.namePlaceholder')} {...p} />
              ))}
              {field('type', t('channels:form.type'), (p) => (
                <NativeSelect {...p} data-testid="channel-form-type">
                  {CHANNEL_TYPES.map((x) => (
                    <option key={x.id} value={x.id}>
                      {x.name}
                    </option>
                  ))}
                </NativeSelect>
              ))}
            </div>
            {field(
              'key',
              t('channels:form.key'),
              (p) => (
                <Textarea
                  rows={editing ? 2 : 3}
                  autoComplete="off"
                  spellCheck={false}
                  className="font-mono text-xs"
                  placeholder={
                    editing
                      ? t('channels:form.keyKeepPlaceholder')
                      : typeKeyFormat === 'kling'
                        ? 'ACCESS_KEY|SECRET_KEY'
                        : t('channels:form.keyPlaceholder')
                  }
                  {...p}
                />
              ),
              <>
                {editing
                  ? t('channels:form.keyKeepHint')
                  : keyCount > 1
                    ? t('channels:form.keyBatchHint', { count: keyCount })
                    : t('channels:form.keyHint')}
                {typeKeyFormat && (
                  <span className="mt-1 block" data-testid="channel-form-key-format">
                    {t(`channels:form.keyFormat.${typeKeyFormat}`)}
                  </span>
                )}
              </>,
            )}
            {editing && !isRoot && (
              <p
                className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
                role="note"
                data-testid="channel-form-destination-hint"
              >
                {t('channels:form.destinationNeedsKeyHint')}
              </p>
            )}
            {field(
              'base_url',
              t('channels:form.baseUrl'),
              (p) => (
                <Input
                  type="url"
                  autoComplete="off"
                  placeholder={type?.defaultBaseUrl || 'https://'}
                  {...p}
                />
              ),
              type && needsBaseUrl(type.id)
                ? t('channels:form.baseUrlRequiredHint')
                : type?.defaultBaseUrl
                  ? t('channels:form.baseUrlDefaultHint', { url: type.defaultBaseUrl })
                  : undefined,
            )}
            {type?.id === 3 &&
              field(
                'api_version',
                t('channels:form.apiVersion'),
                (p) => <Input autoComplete="off" placeholder={AZURE_DEFAULT_API_VERSION} {...p} />,
                t('channels:form.apiVersionHint', { version: AZURE_DEFAULT_API_VERSION }),
              )}
            {type && usesRegion(type.id) &&
              field(
                'region',
                t('channels:form.region'),
                (p) => <Input autoComplete="off" placeholder={VERTEX_DEFAULT_REGION} {...p} />,
                t('channels:form.regionHint', { region: VERTEX_DEFAULT_REGION }),
              )}
            <FormField
              control={form.control}
              name="models"
              render={({ field: f }) => (
                <FormItem>
                  <div className="flex flex-wrap items-center justify-between gap-2">
                    <FormLabel>{t('channels:form.models')}</FormLabel>
                    <Button
                      type="button"
                      variant="outline"
                      size="sm"
                      onClick={onFetchModels}
                      disabled={!editing || fetchModels.isPending}
                      title={editing ? undefined : t('channels:form.fetchModelsSaveFirst')}
                      data-testid="channel-fetch-models"
                    >
                      {fetchModels.isPending ? <Spinner /> : <DownloadIcon />}
                      {t('channels:form.fetchModels')}
                    </Button>
                  </div>
                  <FormControl>
                    <Textarea
                      rows={3}
                      autoComplete="off"
                      spellCheck={false}
                      className="font-mono text-xs"
                      placeholder={type?.id === KLING ? KLING_MODELS.join(',') : 'gpt-4o-mini,gpt-4o,claude-*'}
                      {...f}
                    />
                  </FormControl>
                  <FormDescription>
                    {editing ? t('channels:form.modelsHint') : `${t('channels:form.modelsHint')} ${t('channels:form.fetchModelsSaveFirst')}`}
                  </FormDescription>
                  {editing && (
                    <div className="grid gap-2 sm:grid-cols-[auto_1fr] sm:items-center" data-testid="channel-affix">
                      <NativeSelect
                        aria-label={t('channels:form.affixMode')}
                        value={affixMode}
                        onChange={(e) => setAffixMode(e.target.value === 'suffix' ? 'suffix' : 'prefix')}
                        data-testid="channel-affix-mode"
                      >
                        <option value="prefix">{t('channels:form.affixPrefix')}</option>
                        <option value="suffix">{t('channels:form.affixSuffix')}</option>
                      </NativeSelect>
                      <Input
                        aria-label={t('channels:form.affix')}
                        autoComplete="off"
                        spellCheck={false}
                        placeholder={affixMode === 'prefix' ? 'openai/' : ':free'}
                        value={affix}
                        onChange={(e) => setAffix(e.target.value)}
                        data-testid="channel-affix-text"
                      />
                      <p className="text-sm text-muted-foreground sm:col-span-2">{t('channels:form.affixHint')}</p>
                    </div>
                  )}
                  <FormMessage />
                </FormItem>
              )}
            />
            <div className="grid gap-4 sm:grid-cols-2">
              {field(
                'group',
                t('channels:form.group'),
                (p) => <Input autoComplete="off" placeholder="default" {...p} />,
                t('channels:form.groupHint'),
              )}
              {field(
                'test_model',
                t('channels:form.testModel'),
                (p) => <Input autoComplete="off" placeholder="gpt-4o-mini" {...p} />,
                t('channels:form.testModelHint'),
              )}
              {field(
                'priority',
                t('channels:form.priority'),
                (p) => <Input type="number" min={0} step={1} inputMode="numeric" {...p} />,
                t('channels:form.priorityHint'),
              )}
              {field(
                'weight',
                t('channels:form.weight'),
                (p) => <Input type="number" min={1} step={1} inputMode="numeric" {...p} />,
                t('channels:form.weightHint'),
              )}
              {field('tag', t('channels:form.tag'), (p) => <Input autoComplete="off" {...p} />, t('channels:form.tagHint'))}
              {field(
                'proxy',
                t('channels:form.proxy'),
                (p) => <Input autoComplete="off" placeholder="socks5://127.0.0.1:1080" {...p} />,
                t('channels:form.proxyHint'),
              )}
            </div>
            {field(
              'model_mapping',
              t('channels:form.modelMapping'),
              (p) => (
                <Textarea rows={3} spellCheck={false} className="font-mono text-xs" placeholder={'{\n  "gpt-4": "gpt-4o"\n}'} {...p} />
              ),
              t('channels:form.modelMappingHint'),
            )}
            {field(
              'custom_headers',
              t('channels:form.customHeaders'),
              (p) => (
                <Textarea rows={3} spellCheck={false} className="font-mono text-xs" placeholder={'{\n  "X-Org": "acme"\n}'} {...p} />
              ),
              t('channels:form.customHeadersHint'),
            )}
            <fieldset className="grid gap-4 rounded-md border p-3" data-testid="channel-form-relaying">
              <legend className="px-1 text-sm font-medium">{t('channels:form.relaying')}</legend>
              {(!type || servesChat(type.id)) && (
                <FormField
                  control={form.control}
                  name="only_chat"
                  render={({ field: f }) => (
                    <FormItem>
                      <div className="flex items-center gap-2">
                        <FormControl>
                          <Switch checked={f.value} onCheckedChange={f.onChange} data-testid="channel-form-only-chat" />
                        </FormControl>
                        <FormLabel>{t('channels:form.onlyChat')}</FormLabel>
                      </div>
                      <FormDescription>{t('channels:form.onlyChatHint')}</FormDescription>
                    </FormItem>
                  )}
                />
              )}
              {field(
                'disabled_stream',
                t('channels:form.disabledStream'),
                (p) => <Input autoComplete="off" spellCheck={false} placeholder="o1,o1-mini" {...p} />,
                t('channels:form.disabledStreamHint'),
              )}
              {type && speaksOpenAi(type.id) && (
                <>
                  <div className="grid gap-2" data-testid="channel-form-voices">
                    <p className="text-sm font-medium">{t('channels:form.voiceMapping')}</p>
                    <div className="grid gap-3 sm:grid-cols-3">
                      {TTS_VOICES.map((voice) => (
                        <FormField
                          key={voice}
                          control={form.control}
                          name={`voices.${voice}`}
                          render={({ field: f }) => (
                            <FormItem>
                              <FormLabel className="font-mono text-xs">{voice}</FormLabel>
                              <FormControl>
                                <Input autoComplete="off" spellCheck={false} placeholder={voice} {...f} />
                              </FormControl>
                              <FormMessage />
                            </FormItem>
                          )}
                        />
                      ))}
                    </div>
                    <p className="text-sm text-muted-foreground">{t('channels:form.voiceMappingHint')}</p>
                  </div>
                  {field(
                    'custom_parameter',
                    t('channels:form.customParameter'),
                    (p) => (
                      <Textarea rows={3} spellCheck={false} className="font-mono text-xs" placeholder={'{\n  "temperature": 0.3\n}'} {...p} />
                    ),
                    t('channels:form.customParameterHint'),
                  )}
                </>
              )}
              {type && takesAnthropicBeta(type.id) && (
                <div className="grid gap-4 sm:grid-cols-2" data-testid="channel-form-anthropic-beta">
                  {field(
                    'anthropic_beta_add',
                    t('channels:form.anthropicBetaAdd'),
                    (p) => (
                      <Input
                        autoComplete="off"
                        spellCheck={false}
                        className="font-mono"
                        placeholder="context-1m-2025-08-07"
                        data-testid="channel-form-anthropic-beta-add"
                        {...p}
                      />
                    ),
                    t('channels:form.anthropicBetaAddHint', { max: ANTHROPIC_BETA_MAX }),
                  )}
                  {field(
                    'anthropic_beta_remove',
                    t('channels:form.anthropicBetaRemove'),
                    (p) => (
                      <Input
                        autoComplete="off"
                        spellCheck={false}
                        className="font-mono"
                        placeholder="context-management-*"
                        data-testid="channel-form-anthropic-beta-remove"
                        {...p}
                      />
                    ),
                    t('channels:form.anthropicBetaRemoveHint', { max: ANTHROPIC_BETA_MAX }),
                  )}
                </div>
              )}
            </fieldset>
            {(switches.isPending || switches.isError || typeSwitches.length > 0) && (
              <fieldset className="grid gap-4 rounded-md border p-3" data-testid="channel-form-switches">
                <legend className="px-1 text-sm font-medium">{t('channels:form.switches.title')}</legend>
                {switches.isPending ? (
                  <p className="flex items-center gap-2 text-sm text-muted-foreground" role="status" data-testid="channel-form-switches-loading">
                    <Spinner />
                    {t('common:state.loading')}
                  </p>
                ) : switches.isError ? (
                  <p className="text-sm text-muted-foreground" data-testid="channel-form-switches-error">
                    {t('channels:form.switches.loadFailed')}
                  </p>
                ) : (
                  <>
                    <p className="text-sm text-muted-foreground">{t('channels:form.switches.hint')}</p>
                    {typeSwitches.map((key) => {
                      switch (key) {
                        case 'web_search':
                        case 'code_execution':
                          return (
                            <FormField
                              key={key}
                              control={form.control}
                              name={key}
                              render={({ field: f }) => (
                                <FormItem>
                                  <div className="flex items-center gap-2">
                                    <FormControl>
                                      <Switch checked={f.value} onCheckedChange={f.onChange} data-testid={`channel-switch-${key}`} />
                                    </FormControl>
                                    <FormLabel>{t(`channels:form.switches.${key === 'web_search' ? 'webSearch' : 'codeExecution'}`)}</FormLabel>
                                  </div>
                                  <FormDescription>
                                    {t(`channels:form.switches.${key === 'web_search' ? 'webSearchHint' : 'codeExecutionHint'}`)}
                                  </FormDescription>
                                </FormItem>
                              )}
                            />
                          )
                        case 'plugin':
                          return (
                            <Fragment key={key}>
                              {field(
                                'plugin',
                                t('channels:form.switches.plugin'),
                                (p) => (
                                  <Textarea rows={3} spellCheck={false} className="font-mono text-xs" placeholder={PLUGIN_EXAMPLE} data-testid="channel-switch-plugin" {...p} />
                                ),
                                t('channels:form.switches.pluginHint'),
                              )}
                            </Fragment>
                          )
                        case 'knowledge_id':
                          return (
                            <Fragment key={key}>
                              {field(
                                'knowledge_id',
                                t('channels:form.switches.knowledgeId'),
                                (p) => <Input autoComplete="off" spellCheck={false} className="font-mono" data-testid="channel-switch-knowledge_id" {...p} />,
                                t('channels:form.switches.knowledgeIdHint'),
                              )}
                            </Fragment>
                          )
                        case 'knowledge_template':
                          return (
                            <Fragment key={key}>
                              {field(
                                'knowledge_template',
                                t('channels:form.switches.knowledgeTemplate'),
                                (p) => (
                                  <Textarea
                                    rows={4}
                                    spellCheck={false}
                                    data-testid="channel-switch-knowledge_template"
                                    {...p}
                                  />
                                ),
                                t('channels:form.switches.knowledgeTemplateHint', { knowledgeMark, questionMark, max: KNOWLEDGE_TEMPLATE_MAX }),
                              )}
                            </Fragment>
                          )
                        default:
                          return null
                      }
                    })}
                  </>
                )}
              </fieldset>
            )}
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" disabled={pending} data-testid="channel-form-submit">
                {pending && <Spinner />}
                {t('common:actions.save')}
              </Button>
            </DialogFooter>
          </form>
        </Form>
      </DialogContent>
    </Dialog>
  )
}
