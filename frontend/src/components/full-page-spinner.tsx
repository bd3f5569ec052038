import { Spinner } from '@/components/ui/spinner'

/** Shown while translations or the session are loading; no text (translations may not be ready). */
export function FullPageSpinner() {
  return (
    <div role="status" aria-busy="true" className="flex min-h-[50vh] items-center justify-center">
      <Spinner className="size-8 text-muted-foreground" />
    </div>
  )
}
