import { useQuery } from '@tanstack/react-query'
import { BotIcon, EraserIcon, SendIcon, SquareIcon, UserIcon } from 'lucide-react'
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui/card'
import { Label } from '@/components/ui/label'
import { NativeSelect } from '@/components/ui/native-select'
import { Spinner } from '@/components/ui/spinner'
import { notify } from '@/lib/toast'
import { cn } from '@/lib/utils'
import { streamChat, type ChatMessage, type ChatUsage } from '../api/chat'
import { playgroundModelsQueryOptions, usePlaygroundKey } from '../api/queries'

const textareaClass =
  'w-full min-w-0 rounded-md border border-input bg-transparent px-3 py-2 text-sm shadow-xs outline-none placeholder:text-muted-foreground focus-visible:border-ring focus-visible:ring-2 focus-visible:ring-ring/40 disabled:opacity-50'

/**
 * The chat playground: talks to this server's `/v1/chat/completions` with the user's playground
 * key (POST /api/token/playground), streaming the answer. Every exchange is billed and logged
 * like any other request, so it shows up on the logs screen with its cost.
 */
export function Playground() {
  const { t } = useTranslation()
  const models = useQuery(playgroundModelsQueryOptions())
  const keyMutation = usePlaygroundKey()
  const [key, setKey] = useState<string | null>(null)
  const [model, setModel] = useState('')
  const [system, setSystem] = useState('')
  const [input, setInput] = useState('')
  const [messages, setMessages] = useState<ChatMessage[]>([])
  const [streaming, setStreaming] = useState(false)
  const [usage, setUsage] = useState<ChatUsage | null>(null)
  const abortRef = useRef<AbortController | null>(null)
  const endRef = useRef<HTMLDivElement | null>(null)

  const { mutate: fetchKey } = keyMutation
  useEffect(() => {
    fetchKey(undefined, { onSuccess: (k) => setKey(k.key) })
  }, [fetchKey])
  useEffect(() => {
    if (!model && models.data && models.data.length > 0) setModel(models.data[0]!)
  }, [model, models.data])
  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'end' })
  }, [messages])
  useEffect(() => () => abortRef.current?.abort(), [])

  const send = async (e?: FormEvent) => {
    e?.preventDefault()
    const text = input.trim()
    if (!text || !key || !model || streaming) return
    const history: ChatMessage[] = [...messages, { role: 'user', content: text }]
    setMessages([...history, { role: 'assistant', content: '' }])
    setInput('')
    setUsage(null)
    setStreaming(true)
    const controller = new AbortController()
    abortRef.current = controller
    const sent = system.trim() ? [{ role: 'system' as const, content: system.trim() }, ...history] : history
    try {
      const result = await streamChat({
        key,
        model,
        messages: sent,
        signal: controller.signal,
        onDelta: (delta) =>
          setMessages((all) => {
            const next = all.slice()
            const last = next[next.length - 1]!
            next[next.length - 1] = { ...last, content: last.content + delta }
            return next
          }),
      })
      setUsage(result)
    } catch (error) {
      if (!controller.signal.aborted) {
        notify.error(t('playground:failed', { message: error instanceof Error ? error.message : String(error) }))
        // Drop the empty answer bubble of a failed turn; keep the question to retry.
        setMessages((all) => (all[all.length - 1]?.content ? all : all.slice(0, -1)))
        setInput(text)
      }
    } finally {
      setStreaming(false)
      abortRef.current = null
    }
  }

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      void send()
    }
  }

  const noModels = models.isSuccess && models.data.length === 0
  const ready = Boolean(key) && Boolean(model)

  return (
    <div className="grid gap-4 lg:grid-cols-[18rem_1fr]">
      <Card className="h-fit">
        <CardHeader>
          <CardTitle className="text-base">{t('playground:settings')}</CardTitle>
        </CardHeader>
        <CardContent className="grid gap-4">
          <div className="grid gap-2">
            <Label htmlFor="playground-model">{t('playground:model')}</Label>
            <NativeSelect
              id="playground-model"
              data-testid="playground-model"
              value={model}
              disabled={models.isPending || noModels}
              onChange={(e) => setModel(e.target.value)}
            >
              {(models.data ?? []).map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </NativeSelect>
            {noModels && <p className="text-sm text-muted-foreground">{t('playground:noModels')}</p>}
          </div>
          <div className="grid gap-2">
            <Label htmlFor="playground-system">{t('playground:system')}</Label>
            <textarea
              id="playground-system"
              rows={4}
              className={textareaClass}
              placeholder={t('playground:systemPlaceholder')}
              value={system}
              onChange={(e) => setSystem(e.target.value)}
            />
          </div>
          <Button
            type="button"
            variant="outline"
            disabled={streaming || messages.length === 0}
            onClick={() => {
              setMessages([])
              setUsage(null)
            }}
          >
            <EraserIcon />
            {t('playground:clear')}
          </Button>
          {usage && (
            <p className="text-sm text-muted-foreground" data-testid="playground-usage">
              {t('playground:usage', {
                prompt: usage.prompt_tokens,
                completion: usage.completion_tokens,
                total: usage.total_tokens,
              })}
            </p>
          )}
        </CardContent>
      </Card>

      <Card className="flex min-h-[28rem] flex-col">
        <CardContent className="flex flex-1 flex-col gap-4 pt-6">
          <div className="flex-1 space-y-4 overflow-y-auto" data-testid="playground-messages" aria-live="polite">
            {messages.length === 0 ? (
              <div className="grid h-full place-items-center py-16 text-center text-muted-foreground" data-testid="playground-empty">
                {keyMutation.isPending ? <Spinner /> : t('playground:empty')}
              </div>
            ) : (
              messages.map((m, i) => (
                <div
                  key={i}
                  data-testid={`playground-message-${m.role}`}
                  className={cn('flex gap-3', m.role === 'user' && 'flex-row-reverse')}
                >
                  <div className="mt-1 shrink-0 text-muted-foreground">
                    {m.role === 'user' ? <UserIcon className="size-5" /> : <BotIcon className="size-5" />}
                  </div>
                  <div
                    className={cn(
                      'max-w-[85%] rounded-lg px-3 py-2 text-sm whitespace-pre-wrap break-words',
                      m.role === 'user' ? 'bg-primary text-primary-foreground' : 'bg-muted',
                    )}
                  >
                    {m.content || (streaming && i === messages.length - 1 ? <Spinner /> : '')}
                  </div>
                </div>
              ))
            )}
            <div ref={endRef} />
          </div>
          <form className="flex items-end gap-2" onSubmit={(e) => void send(e)}>
            <textarea
              aria-label={t('playground:input')}
              data-testid="playground-input"
              rows={2}
              className={cn(textareaClass, 'resize-none')}
              placeholder={ready ? t('playground:inputPlaceholder') : t('playground:preparing')}
              value={input}
              disabled={!ready}
              onChange={(e) => setInput(e.target.value)}
              onKeyDown={onKeyDown}
            />
            {streaming ? (
              <Button type="button" variant="outline" onClick={() => abortRef.current?.abort()} data-testid="playground-stop">
                <SquareIcon />
                {t('playground:stop')}
              </Button>
            ) : (
              <Button type="submit" disabled={!ready || !input.trim()} data-testid="playground-send">
                <SendIcon />
                {t('playground:send')}
              </Button>
            )}
          </form>
        </CardContent>
      </Card>
    </div>
  )
}
