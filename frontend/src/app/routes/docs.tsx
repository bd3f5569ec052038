import { DocsViewer } from '@/features/docs/components/docs-viewer'
import type { DocsSection } from '@/features/docs/pages'

/** /panel/guides/*, /panel/tools/* and the public /guides/*, /tools/* (spec section 2.5). */
export default function DocsRoute({ section, base }: { section: DocsSection; base: '' | '/panel' }) {
  if (base === '/panel') return <DocsViewer section={section} base={base} />
  return <DocsViewer section={section} base={base} className="mx-auto w-full max-w-[1200px] px-4 py-8" />
}
