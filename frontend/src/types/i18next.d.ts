import 'i18next'
import type playground from '../../public/locales/zh_CN/playground.json'
import type auth from '../../public/locales/zh_CN/auth.json'
import type common from '../../public/locales/zh_CN/common.json'
import type errors from '../../public/locales/zh_CN/errors.json'
import type logs from '../../public/locales/zh_CN/logs.json'
import type panel from '../../public/locales/zh_CN/panel.json'
import type tokens from '../../public/locales/zh_CN/tokens.json'
import type channels from '../../public/locales/zh_CN/channels.json'
import type users from '../../public/locales/zh_CN/users.json'
import type groups from '../../public/locales/zh_CN/groups.json'
import type redemptions from '../../public/locales/zh_CN/redemptions.json'
import type payment from '../../public/locales/zh_CN/payment.json'
import type topup from '../../public/locales/zh_CN/topup.json'
import type owners from '../../public/locales/zh_CN/owners.json'
import type dashboard from '../../public/locales/zh_CN/dashboard.json'
import type profile from '../../public/locales/zh_CN/profile.json'
import type pricing from '../../public/locales/zh_CN/pricing.json'
import type invoices from '../../public/locales/zh_CN/invoices.json'
import type analytics from '../../public/locales/zh_CN/analytics.json'
import type system from '../../public/locales/zh_CN/system.json'
import type settings from '../../public/locales/zh_CN/settings.json'
import type publicNs from '../../public/locales/zh_CN/public.json'
import type tasks from '../../public/locales/zh_CN/tasks.json'
import type docs from '../../public/locales/zh_CN/docs.json'
import type telegram from '../../public/locales/zh_CN/telegram.json'

// Typed keys: `t('auth:login.title')` is checked at compile time against the zh_CN files;
// a test checks that the other languages have exactly the same keys. Listing every namespace
// as default lets any component use any `ns:key` without naming namespaces in useTranslation().
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: ['common', 'auth', 'panel', 'errors', 'tokens', 'logs', 'channels', 'users', 'groups', 'redemptions', 'payment', 'topup', 'owners', 'dashboard', 'profile', 'pricing', 'invoices', 'analytics', 'system', 'settings', 'public', 'playground', 'tasks', 'docs', 'telegram']
    resources: {
      common: typeof common
      auth: typeof auth
      panel: typeof panel
      errors: typeof errors
      tokens: typeof tokens
      logs: typeof logs
      channels: typeof channels
      users: typeof users
      groups: typeof groups
      redemptions: typeof redemptions
      payment: typeof payment
      topup: typeof topup
      owners: typeof owners
      dashboard: typeof dashboard
      profile: typeof profile
      pricing: typeof pricing
      invoices: typeof invoices
      analytics: typeof analytics
      system: typeof system
      settings: typeof settings
      public: typeof publicNs
      playground: typeof playground
      tasks: typeof tasks
      docs: typeof docs
      telegram: typeof telegram
    }
  }
}
