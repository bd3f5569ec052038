import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http, HttpResponse } from 'msw'
import { beforeEach, describe, expect, it } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { ok, signInAs } from '@/test/helpers'
import { renderApp } from '@/test/render'
import { server } from '@/test/server'
import { PLAYGROUND_KEY, playgroundHandlers, relayCalls } from '../mocks/handlers'

const signIn = () => signInAs(mockRoot)

describe('chat playground', { timeout: 20_000 }, () => {
  beforeEach(() => {
    relayCalls.length = 0
    server.use(...playgroundHandlers)
  })

  it('streams an answer with the playground key and shows the usage', async () => {
    signIn()
    renderApp('/panel/playground')
    const input = await screen.findByTestId('playground-input')
    await waitFor(() => expect(input).toBeEnabled())
    expect(screen.getByTestId('playground-empty')).toBeInTheDocument()
    const user = userEvent.setup()
    await user.type(input, 'Say hello{Enter}')

    const answer = await screen.findByTestId('playground-message-assistant')
    await waitFor(() => expect(answer).toHaveTextContent('Hello, world!'))
    expect(screen.getByTestId('playground-message-user')).toHaveTextContent('Say hello')
    expect(await screen.findByTestId('playground-usage')).toHaveTextContent('13')
    expect(relayCalls).toHaveLength(1)
    expect(relayCalls[0]!.authorization).toBe(`Bearer ${PLAYGROUND_KEY}`)
    const body = relayCalls[0]!.body as { model: string; stream: boolean; messages: unknown[] }
    expect(body.stream).toBe(true)
    expect(body.model).toBe('gpt-4o-mini')
    const options = within(screen.getByTestId('playground-model')).getAllByRole('option').map((o) => o.textContent)
    expect(options).toEqual(['gpt-4o-mini', 'gpt-4o'])
    expect(body.messages).toEqual([{ role: 'user', content: 'Say hello' }])

    // The next turn carries the history and the system prompt.
    await user.type(screen.getByLabelText('系统提示词'), 'Be brief')
    await user.type(screen.getByTestId('playground-input'), 'Again')
    await user.click(screen.getByTestId('playground-send'))
    await waitFor(() => expect(relayCalls).toHaveLength(2))
    const second = relayCalls[1]!.body as { messages: { role: string; content: string }[] }
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user'])
    expect(second.messages[0]!.content).toBe('Be brief')
    expect(second.messages[2]!.content).toBe('Hello, world!')
  })

  it('shows the relay error and keeps the question to retry', async () => {
    server.use(
      http.post('*/v1/chat/completions', () =>
        HttpResponse.json(
          { error: { message: 'Insufficient quota for this request.', type: 'insufficient_quota', code: 'insufficient_quota' } },
          { status: 403 },
        ),
      ),
    )
    signIn()
    renderApp('/panel/playground')
    const input = await screen.findByTestId('playground-input')
    await waitFor(() => expect(input).toBeEnabled())
    const user = userEvent.setup()
    await user.type(input, 'Costly question{Enter}')
    expect(await screen.findByText(/Insufficient quota for this request\./)).toBeInTheDocument()
    await waitFor(() => expect(screen.getByTestId('playground-input')).toHaveValue('Costly question'))
    expect(screen.queryByTestId('playground-message-assistant')).toBeNull()
    expect(within(screen.getByTestId('playground-messages')).getByTestId('playground-message-user')).toBeInTheDocument()
  })

  it('says so when the group has no priced model', async () => {
    server.use(http.get('*/api/available_model', () => ok([{ model: 'x', price: null, group_ratio: 1 }])))
    signIn()
    renderApp('/panel/playground')
    expect(await screen.findByText('当前分组没有可用（已定价）的模型。')).toBeInTheDocument()
    expect(screen.getByTestId('playground-send')).toBeDisabled()
  })

  it('the public /playground shows the playground without leaving the public layout', async () => {
    signIn()
    renderApp('/playground')
    expect(await screen.findByRole('heading', { level: 1, name: '操练场' })).toBeInTheDocument()
    expect(screen.getByTestId('location')).toHaveTextContent(/^\/playground$/)
  })
})
