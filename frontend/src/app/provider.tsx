import { QueryClientProvider, type QueryClient } from '@tanstack/react-query'
import { Suspense, type ReactNode } from 'react'
import { AppToaster } from '@/components/app-toaster'
import { FullPageSpinner } from '@/components/full-page-spinner'
import { NoticeDialog } from '@/features/notice/components/notice-dialog'
import { SiteStatusLoader } from '@/features/site/components/site-status-loader'
import { queryClient as defaultQueryClient } from '@/lib/query-client'

export interface AppProviderProps {
  children: ReactNode
  /** Tests pass a fresh client. */
  queryClient?: QueryClient
}

export function AppProvider({ children, queryClient = defaultQueryClient }: AppProviderProps) {
  return (
    // Suspends while the first translation files load.
    <Suspense fallback={<FullPageSpinner />}>
      <QueryClientProvider client={queryClient}>
        <SiteStatusLoader />
        {children}
        <NoticeDialog />
        <AppToaster />
      </QueryClientProvider>
    </Suspense>
  )
}
