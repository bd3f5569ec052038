import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { groupItems, visibleMenu } from '@/app/menu'
import { mockRoot, resetAuthMocks } from '@/features/auth/mocks/handlers'
import { setUser } from '@/stores/session'
import { renderApp } from '@/test/render'
import { ROLE } from '@/types/api'
import { DOCS_PAGES, docsFileUrl, findDocsPage, type DocsSection } from './pages'

const normalUser = { ...mockRoot, id: 2, username: 'alice', display_name: 'Alice', role: ROLE.user }

function signIn() {
  resetAuthMocks(normalUser)
  setUser(normalUser)
}

describe('docs menu', () => {
  it('shows guides and tools to a normal user in the setting group', () => {
    const setting = visibleMenu({ role: ROLE.user }).find((g) => g.id === 'setting')
    const items = setting ? groupItems(setting) : []
    expect(items.map((i) => i.id)).toEqual(expect.arrayContaining(['guides', 'tools']))
    expect(items.find((i) => i.id === 'guides')?.url).toBe('/panel/guides')
    expect(items.find((i) => i.id === 'tools')?.url).toBe('/panel/tools')
  })
})

describe('docs pages', () => {
  it('/panel/guides/problems/models shows the page in a sandboxed, titled frame', async () => {
    signIn()
    renderApp('/panel/guides/problems/models')
    const frame = await screen.findByTestId('docs-frame')
    expect(frame).toHaveAttribute('src', '/help/guides/problems/models.html')
    expect(frame).toHaveAttribute('title', '模型与价格')
    expect(frame).toHaveAttribute('sandbox', 'allow-same-origin allow-popups')
    expect(screen.getByTestId('docs-link-problems/models')).toHaveAttribute('aria-current', 'page')
    expect(within(screen.getByTestId('breadcrumbs')).getByText('使用指南')).toHaveAttribute('aria-current', 'page')
  })

  it('choosing another page changes the URL and the frame', async () => {
    signIn()
    renderApp('/panel/guides/problems/models')
    await screen.findByTestId('docs-frame')
    const user = userEvent.setup()
    await user.click(within(screen.getByTestId('docs-nav')).getByText('快速开始'))
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel/guides/quickstart'))
    expect(screen.getByTestId('docs-frame')).toHaveAttribute('src', '/help/guides/quickstart.html')

    // The phone select does the same.
    await user.selectOptions(screen.getByTestId('docs-select'), 'agreement/privacy')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/panel/guides/agreement/privacy'))
    expect(screen.getByTestId('docs-frame')).toHaveAttribute('src', '/help/guides/agreement/privacy.html')
  })

  it('an unknown sub-path falls back to the section index', async () => {
    signIn()
    renderApp('/panel/tools/no/such/page')
    const frame = await screen.findByTestId('docs-frame')
    expect(frame).toHaveAttribute('src', '/help/tools/index.html')
    expect(screen.getByTestId('docs-link-index')).toHaveAttribute('aria-current', 'page')
    expect(findDocsPage('guides', 'nope').path).toBe('')
  })

  it('the docs layout serves /docs/tools without signing in, linked from the top bar', async () => {
    renderApp('/')
    const link = await screen.findByTestId('nav-tools')
    expect(screen.getByTestId('nav-guides')).toHaveAttribute('href', '/docs/guides')
    await userEvent.setup().click(link)
    expect(await screen.findByTestId('docs-layout')).toBeInTheDocument()
    const frame = await screen.findByTestId('docs-frame')
    expect(frame).toHaveAttribute('src', '/help/tools/index.html')
    expect(screen.getByTestId('docs-link-web/nextchat')).toHaveAttribute('href', '/docs/tools/web/nextchat')
    expect(screen.getByTestId('docs-tab-tools')).toHaveAttribute('aria-current', 'page')
    // The public layout's footer is not part of the docs layout.
    expect(screen.queryByTestId('footer')).not.toBeInTheDocument()
  })

  it('/docs opens the guides; the old public /tools address still works', async () => {
    renderApp('/docs')
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/docs/guides'))
    expect(await screen.findByTestId('docs-frame')).toHaveAttribute('src', '/help/guides/index.html')
    renderApp('/tools/web/nextchat')
    expect((await screen.findAllByTestId('docs-frame')).at(-1)).toHaveAttribute('src', '/help/tools/web/nextchat.html')
  })

  it('every listed page exists as a file under public/help', () => {
    const root = join(process.cwd(), 'public')
    for (const section of Object.keys(DOCS_PAGES) as DocsSection[]) {
      for (const page of DOCS_PAGES[section]) {
        const file = join(root, docsFileUrl(section, page))
        expect(existsSync(file), file).toBe(true)
      }
    }
    expect(existsSync(join(root, 'help', 'docs.css'))).toBe(true)
  })
})
