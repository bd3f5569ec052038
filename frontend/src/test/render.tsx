import { render } from '@testing-library/react'
import { StrictMode, type ReactElement } from 'react'
import { MemoryRouter, Route, Routes, useLocation } from 'react-router'
import { AppProvider } from '@/app/provider'
import { AppRoutes } from '@/app/router'
import { createQueryClient } from '@/lib/query-client'

/**
 * The app's query client, except that its one retry of a network error or 5xx is made at once
 * instead of after TanStack's 1 s back-off: still made, but no test waits a real second for it.
 */
function testQueryClient() {
  const client = createQueryClient()
  const defaults = client.getDefaultOptions()
  client.setDefaultOptions({ ...defaults, queries: { ...defaults.queries, retryDelay: 0 } })
  return client
}

/** Renders the current path so tests can assert navigation. */
function LocationProbe() {
  const location = useLocation()
  return (
    <output data-testid="location" data-search={location.search}>
      {location.pathname}
    </output>
  )
}

/**
 * The whole app (providers, routes, toaster) at `route`, with a fresh query client. `strict`
 * renders it in React's StrictMode, as main.tsx does (effects run twice on mount).
 */
export function renderApp(route = '/', { strict = false } = {}) {
  const queryClient = testQueryClient()
  const app = (
    <AppProvider queryClient={queryClient}>
      <MemoryRouter initialEntries={[route]}>
        <AppRoutes />
        <LocationProbe />
      </MemoryRouter>
    </AppProvider>
  )
  const view = render(strict ? <StrictMode>{app}</StrictMode> : app)
  return { ...view, queryClient }
}

/** One element inside the providers and a router, at `route`. */
export function renderWithProviders(ui: ReactElement, route = '/') {
  const queryClient = testQueryClient()
  const view = render(
    <AppProvider queryClient={queryClient}>
      <MemoryRouter initialEntries={[route]}>
        <Routes>
          <Route path="*" element={ui} />
        </Routes>
        <LocationProbe />
      </MemoryRouter>
    </AppProvider>,
  )
  return { ...view, queryClient }
}
