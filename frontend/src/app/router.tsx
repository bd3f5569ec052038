import { lazy } from 'react'
import { Navigate, Route, Routes } from 'react-router'
import { RequireAuth } from '@/features/auth/components/require-auth'
import { DocsLayout } from './layouts/docs-layout'
import { PublicLayout } from './layouts/public-layout'
import { HomeRoute } from './routes/home'
import { NotFoundRoute } from './routes/not-found'

// Screens behind the first paint load on demand.
const LoginRoute = lazy(() => import('./routes/login'))
const PanelLayout = lazy(() => import('./layouts/panel-layout'))
const DashboardRoute = lazy(() => import('./routes/panel/dashboard'))
const PlaygroundRoute = lazy(() => import('./routes/panel/playground'))
const TokenRoute = lazy(() => import('./routes/panel/token'))
const LogRoute = lazy(() => import('./routes/panel/log'))
const AboutRoute = lazy(() => import('./routes/about'))
const ResetConfirmRoute = lazy(() => import('./routes/reset-confirm'))
const ResetRoute = lazy(() => import('./routes/reset'))
const RegisterRoute = lazy(() => import('./routes/register'))
const SettingRoute = lazy(() => import('./routes/panel/setting'))
const SystemInfoRoute = lazy(() => import('./routes/panel/system-info'))
const AnalyticsRoute = lazy(() => import('./routes/panel/analytics'))
const InvoiceDetailRoute = lazy(() => import('./routes/panel/invoice-detail'))
const InvoiceRoute = lazy(() => import('./routes/panel/invoice'))
const PriceRoute = lazy(() => import('./routes/price'))
const PricingRoute = lazy(() => import('./routes/panel/pricing'))
const ModelPriceRoute = lazy(() => import('./routes/panel/model-price'))
const ProfileRoute = lazy(() => import('./routes/panel/profile'))
const ModelOwnedbyRoute = lazy(() => import('./routes/panel/model-ownedby'))
const RedemptionRoute = lazy(() => import('./routes/panel/redemption'))
const PaymentRoute = lazy(() => import('./routes/panel/payment'))
const TelegramRoute = lazy(() => import('./routes/panel/telegram'))
const TopupRoute = lazy(() => import('./routes/panel/topup'))
const UserGroupRoute = lazy(() => import('./routes/panel/user-group'))
const UserRoute = lazy(() => import('./routes/panel/user'))
const ChannelRoute = lazy(() => import('./routes/panel/channel'))
const MidjourneyRoute = lazy(() => import('@/features/tasks/components/midjourney-screen'))
const TaskRoute = lazy(() => import('@/features/tasks/components/task-screen'))
const DocsRoute = lazy(() => import('./routes/docs'))
const PublicPlaygroundRoute = lazy(() => import('./routes/public-playground'))
const JumpRoute = lazy(() => import('./routes/jump'))
const OAuthCallbackRoute = lazy(() => import('./routes/oauth-callback'))

/** All routes in one place (spec section 2). */
export function AppRoutes() {
  return (
    <Routes>
      <Route element={<PublicLayout />}>
        <Route index element={<HomeRoute />} />
        <Route path="login" element={<LoginRoute />} />
        <Route path="about" element={<AboutRoute />} />
        <Route path="user/reset" element={<ResetConfirmRoute />} />
        <Route path="reset" element={<ResetRoute />} />
        <Route path="register" element={<RegisterRoute />} />
        <Route path="oauth/github" element={<OAuthCallbackRoute provider="github" />} />
        <Route path="oauth/oidc" element={<OAuthCallbackRoute provider="oidc" />} />
        <Route path="oauth/lark" element={<OAuthCallbackRoute provider="lark" />} />
        <Route path="price" element={<PriceRoute />} />
        <Route path="playground" element={<RequireAuth />}>
          <Route index element={<PublicPlaygroundRoute />} />
        </Route>
        <Route path="jump" element={<JumpRoute />} />
        <Route path="404" element={<NotFoundRoute />} />
        <Route path="guides/*" element={<DocsRoute section="guides" base="" />} />
        <Route path="tools/*" element={<DocsRoute section="tools" base="" />} />
      </Route>

      <Route path="docs" element={<DocsLayout />}>
        <Route index element={<Navigate to="/docs/guides" replace />} />
        <Route path="guides/*" element={<DocsRoute section="guides" base="/docs" />} />
        <Route path="tools/*" element={<DocsRoute section="tools" base="/docs" />} />
        <Route path="*" element={<NotFoundRoute />} />
      </Route>

      <Route path="panel" element={<RequireAuth />}>
        <Route element={<PanelLayout />}>
          <Route index element={<DashboardRoute />} />
          <Route path="dashboard" element={<DashboardRoute />} />
          <Route path="playground" element={<PlaygroundRoute />} />
          <Route path="token" element={<TokenRoute />} />
          <Route path="log" element={<LogRoute />} />
          <Route path="setting" element={<SettingRoute />} />
          <Route path="system_info" element={<SystemInfoRoute />} />
          <Route path="analytics" element={<AnalyticsRoute />} />
          <Route path="invoice/detail/:date" element={<InvoiceDetailRoute />} />
          <Route path="invoice" element={<InvoiceRoute />} />
          <Route path="pricing" element={<PricingRoute />} />
          <Route path="model_price" element={<ModelPriceRoute />} />
          <Route path="profile" element={<ProfileRoute />} />
          <Route path="model_ownedby" element={<ModelOwnedbyRoute />} />
          <Route path="redemption" element={<RedemptionRoute />} />
          <Route path="payment" element={<PaymentRoute />} />
          <Route path="telegram" element={<TelegramRoute />} />
          <Route path="topup" element={<TopupRoute />} />
          <Route path="user_group" element={<UserGroupRoute />} />
          <Route path="user" element={<UserRoute />} />
          <Route path="channel" element={<ChannelRoute />} />
          <Route path="midjourney" element={<MidjourneyRoute />} />
          <Route path="task" element={<TaskRoute />} />
          <Route path="guides/*" element={<DocsRoute section="guides" base="/panel" />} />
          <Route path="tools/*" element={<DocsRoute section="tools" base="/panel" />} />
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
