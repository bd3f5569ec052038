import 'i18next'
import type auth from '../../public/locales/zh_CN/auth.json'
import type common from '../../public/locales/zh_CN/common.json'
import type errors from '../../public/locales/zh_CN/errors.json'
import type logs from '../../public/locales/zh_CN/logs.json'
import type panel from '../../public/locales/zh_CN/panel.json'
import type tokens from '../../public/locales/zh_CN/tokens.json'

// Typed keys: `t('auth:login.title')` is checked at compile time against the zh_CN files;
// a test checks that the other languages have exactly the same keys. Listing every namespace
// as default lets any component use any `ns:key` without naming namespaces in useTranslation().
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: ['common', 'auth', 'panel', 'errors', 'tokens', 'logs']
    resources: {
      common: typeof common
      auth: typeof auth
      panel: typeof panel
      errors: typeof errors
      tokens: typeof tokens
      logs: typeof logs
    }
  }
}
