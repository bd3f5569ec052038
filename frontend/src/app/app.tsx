import { BrowserRouter } from 'react-router'
import { ScrollToTop } from '@/components/scroll-to-top'
import { AppProvider } from './provider'
import { AppRoutes } from './router'

export function App() {
  return (
    <AppProvider>
      <BrowserRouter>
        <ScrollToTop />
        <AppRoutes />
      </BrowserRouter>
    </AppProvider>
  )
}
