import { http, HttpResponse } from 'msw'

export const PLAYGROUND_KEY = 'sk-playgroundplaygroundplaygroundplaygroundplayg'

/** The bodies the mocked relay received (tests read them). */
export const relayCalls: { authorization: string | null; body: unknown }[] = []

/** An SSE answer in OpenAI's chunk shape: the text in pieces, then a usage chunk and [DONE]. */
export function sseAnswer(pieces: string[], usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 }) {
  const events = [
    ...pieces.map((p) => ({ choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })),
    { choices: [], usage },
  ]
  const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n'
  return new HttpResponse(text, { headers: { 'Content-Type': 'text/event-stream' } })
}

const price = { model: 'gpt-4o-mini', type: 'tokens', channel_type: 1, input: 0.075, output: 0.3, extra: {}, locked: false }

export const playgroundHandlers = [
  http.get('*/api/available_model', () =>
    HttpResponse.json({
      success: true,
      message: '',
      data: [
        { model: 'gpt-4o-mini', price, group_ratio: 1 },
        { model: 'gpt-4o', price: { ...price, model: 'gpt-4o' }, group_ratio: 1 },
        { model: 'unpriced-model', price: null, group_ratio: 1 },
      ],
    }),
  ),
  http.post('*/api/token/playground', () =>
    HttpResponse.json({ success: true, message: '', data: { id: 7, key: PLAYGROUND_KEY, created: false } }),
  ),
  http.post('*/v1/chat/completions', async ({ request }) => {
    relayCalls.push({ authorization: request.headers.get('Authorization'), body: await request.json() })
    return sseAnswer(['Hello', ', ', 'world!'])
  }),
]
