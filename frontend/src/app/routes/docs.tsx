import { DocsViewer } from '@/features/docs/components/docs-viewer'
import type { DocsSection } from '@/features/docs/pages'

/** /docs/guides/*, /docs/tools/* (the docs layout), /panel/guides/*, /panel/tools/* and the public /guides/*, /tools/* (spec section 2.5). */
export default function DocsRoute({ section, base }: { section: DocsSection; base: '' | '/panel' | '/docs' }) {
  if (base === '/panel') return <DocsViewer section={section} base={base} />
  if (base === '/docs') return <DocsViewer section={section} base={base} className="mx-auto w-full max-w-[1400px]" />
  return <DocsViewer section={section} base={base} className="mx-auto w-full max-w-[1200px] px-4 py-8" />
}
