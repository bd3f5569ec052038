import type { ParseKeys } from 'i18next'

/** The two documentation sections (spec section 2.5): static html under public/help/<section>/. */
export type DocsSection = 'guides' | 'tools'

export interface DocsPage {
  /** Path below the section ('' is the section index), as in the URL /panel/<section>/<path>. */
  path: string
  title: ParseKeys
}

export const DOCS_PAGES: Record<DocsSection, DocsPage[]> = {
  guides: [
    { path: '', title: 'docs:pages.guides.index' },
    { path: 'quickstart', title: 'docs:pages.guides.quickstart' },
    { path: 'activity', title: 'docs:pages.guides.activity' },
    { path: 'problems/break', title: 'docs:pages.guides.problemsBreak' },
    { path: 'problems/models', title: 'docs:pages.guides.problemsModels' },
    { path: 'problems/gpts', title: 'docs:pages.guides.problemsGpts' },
    { path: 'agreement/user', title: 'docs:pages.guides.agreementUser' },
    { path: 'agreement/privacy', title: 'docs:pages.guides.agreementPrivacy' },
  ],
  tools: [
    { path: '', title: 'docs:pages.tools.index' },
    { path: 'academic/zotero', title: 'docs:pages.tools.academicZotero' },
    { path: 'academic/xueshu', title: 'docs:pages.tools.academicXueshu' },
    { path: 'broswer/sider', title: 'docs:pages.tools.broswerSider' },
    { path: 'broswer/google', title: 'docs:pages.tools.broswerGoogle' },
    { path: 'broswer/translate', title: 'docs:pages.tools.broswerTranslate' },
    { path: 'code/codegpt', title: 'docs:pages.tools.codeCodegpt' },
    { path: 'code/easycode', title: 'docs:pages.tools.codeEasycode' },
    { path: 'cross/chatx', title: 'docs:pages.tools.crossChatx' },
    { path: 'web/nextchat', title: 'docs:pages.tools.webNextchat' },
    { path: 'web/chatproxy', title: 'docs:pages.tools.webChatproxy' },
  ],
}

/** The page a URL splat names; unknown or empty paths give the section index. */
export function findDocsPage(section: DocsSection, splat: string | undefined): DocsPage {
  const path = (splat ?? '').replace(/^\/+|\/+$/g, '').replace(/\.html$/, '')
  const pages = DOCS_PAGES[section]
  return pages.find((p) => p.path === path) ?? { path: '', title: `docs:pages.${section}.index` }
}

/** Address of the static file shown in the frame. */
export function docsFileUrl(section: DocsSection, page: DocsPage): string {
  return `/help/${section}/${page.path || 'index'}.html`
}

/** Console or public address of a page (base is '/panel' or ''). */
export function docsRouteUrl(base: string, section: DocsSection, page: DocsPage): string {
  return page.path ? `${base}/${section}/${page.path}` : `${base}/${section}`
}
