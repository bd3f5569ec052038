/** One message of the conversation, in OpenAI's chat shape. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface ChatUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

/** A relay error: the OpenAI-shaped message from `/v1` (or the HTTP status when there is none). */
export class RelayError extends Error {
  override name = 'RelayError'
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

export interface StreamChatOptions {
  key: string
  model: string
  messages: ChatMessage[]
  temperature?: number
  signal?: AbortSignal
  /** Called with each piece of the answer as it arrives. */
  onDelta: (text: string) => void
}

/**
 * Sends a streamed chat completion through this server's `/v1` relay with the playground key and
 * reads the server-sent events: text deltas go to `onDelta`, the final usage chunk is returned.
 */
export async function streamChat({ key, model, messages, temperature, signal, onDelta }: StreamChatOptions): Promise<ChatUsage | null> {
  const res = await fetch('/v1/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
      ...(temperature === undefined ? {} : { temperature }),
    }),
    signal,
  })
  if (!res.ok || !res.body) {
    let message = `HTTP ${res.status}`
    try {
      const body = (await res.json()) as { error?: { message?: string } }
      if (body.error?.message) message = body.error.message
    } catch {
      // not JSON: keep the status
    }
    throw new RelayError(res.status, message)
  }
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let usage: ChatUsage | null = null
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    let newline = buffer.indexOf('\n')
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim()
      buffer = buffer.slice(newline + 1)
      newline = buffer.indexOf('\n')
      if (!line.startsWith('data:')) continue
      const data = line.slice(5).trim()
      if (data === '[DONE]') return usage
      try {
        const chunk = JSON.parse(data) as {
          choices?: { delta?: { content?: string | null } }[]
          usage?: ChatUsage | null
          error?: { message?: string }
        }
        if (chunk.error?.message) throw new RelayError(502, chunk.error.message)
        const text = chunk.choices?.[0]?.delta?.content
        if (text) onDelta(text)
        if (chunk.usage) usage = chunk.usage
      } catch (error) {
        if (error instanceof RelayError) throw error
        // A line that is not JSON (a comment or keep-alive): skip it.
      }
    }
  }
  return usage
}
