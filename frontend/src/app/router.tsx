import { lazy } from 'react'
import { Navigate, Route, Routes } from 'react-router'
import { RequireAuth } from '@/features/auth/components/require-auth'
import { PublicLayout } from './layouts/public-layout'
import { HomeRoute } from './routes/home'
import { NotFoundRoute } from './routes/not-found'

// Screens behind the first paint load on demand.
const LoginRoute = lazy(() => import('./routes/login'))
const PanelLayout = lazy(() => import('./layouts/panel-layout'))
const DashboardRoute = lazy(() => import('./routes/panel/dashboard'))
const TokenRoute = lazy(() => import('./routes/panel/token'))
const LogRoute = lazy(() => import('./routes/panel/log'))

/** All routes in one place (spec section 2). */
export function AppRoutes() {
  return (
    <Routes>
      <Route element={<PublicLayout />}>
        <Route index element={<HomeRoute />} />
        <Route path="login" element={<LoginRoute />} />
        <Route path="404" element={<NotFoundRoute />} />
      </Route>

      <Route path="panel" element={<RequireAuth />}>
        <Route element={<PanelLayout />}>
          <Route index element={<DashboardRoute />} />
          <Route path="dashboard" element={<DashboardRoute />} />
          <Route path="token" element={<TokenRoute />} />
          <Route path="log" element={<LogRoute />} />
          <Route path="404" element={<NotFoundRoute />} />
          <Route path="*" element={<Navigate to="/panel/404" replace />} />
        </Route>
      </Route>

      <Route element={<PublicLayout />}>
        <Route path="*" element={<NotFoundRoute />} />
      </Route>
    </Routes>
  )
}
