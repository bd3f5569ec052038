import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { http } from 'msw'
import { useLocation } from 'react-router'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { mockStatus } from '@/features/site/mocks/handlers'
import { ok } from '@/test/helpers'
import { renderWithProviders } from '@/test/render'
import { server } from '@/test/server'
import { fullKeyOf, mockToken, resetTokenMocks } from '../mocks/handlers'
import { ChatLinksMenu, openChat } from './chat-links-menu'

const LINKS = [
  { name: 'OpenCat', url: 'opencat://team/join?domain={server}&token={key}', show: true, sort: 2 },
  { name: 'ChatGPT Next', url: 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{server}"}', show: true, sort: 1 },
  { name: 'Hidden', url: 'https://hidden.example/{key}', show: false, sort: 0 },
]

afterEach(() => vi.restoreAllMocks())

/** The site status the app loads at start, with these chat links. */
const setSiteInfo = (extra: Record<string, unknown>) =>
  server.use(http.get('*/api/status', () => ok({ ...mockStatus, ...extra })))

function SearchProbe() {
  const { search } = useLocation()
  return <output data-testid="search">{search}</output>
}

describe('chat links of a key', () => {
  it('lists the shown clients in order and opens a web client with the full key and this server', async () => {
    setSiteInfo({ chat_links: LINKS, server_address: 'https://api.example.com' })
    resetTokenMocks([mockToken({ id: 7 })])
    const web = vi.spyOn(openChat, 'web').mockImplementation(() => null)
    const user = userEvent.setup()
    renderWithProviders(<ChatLinksMenu tokenId={7} tokenName="mine" />)
    await user.click(await screen.findByTestId('token-chat-7'))
    const items = await screen.findAllByTestId('token-chat-link')
    expect(items.map((i) => i.textContent)).toEqual(['ChatGPT Next', 'OpenCat'])
    await user.click(items[0]!)
    await waitFor(() =>
      expect(web).toHaveBeenCalledWith(`https://app.nextchat.dev/#/?settings={"key":"${fullKeyOf(7)}","url":"https://api.example.com"}`),
    )
  })

  it('sends an app scheme through /jump', async () => {
    setSiteInfo({ chat_links: LINKS, server_address: '' })
    resetTokenMocks([mockToken({ id: 3 })])
    const user = userEvent.setup()
    renderWithProviders(
      <>
        <ChatLinksMenu tokenId={3} tokenName="mine" />
        <SearchProbe />
      </>,
    )
    await user.click(await screen.findByTestId('token-chat-3'))
    await user.click((await screen.findAllByTestId('token-chat-link'))[1]!)
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/jump'))
    const url = new URLSearchParams(screen.getByTestId('search').textContent ?? '').get('url')
    expect(url).toBe(`opencat://team/join?domain=${window.location.origin}&token=${fullKeyOf(3)}`)
  })

  it('is absent when the site lists no chat clients', async () => {
    setSiteInfo({ chat_links: [] })
    renderWithProviders(<ChatLinksMenu tokenId={1} tokenName="x" />)
    await waitFor(() => expect(screen.queryByTestId('token-chat-1')).not.toBeInTheDocument())
  })
})
