import { LanguagesIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuLabel,
  DropdownMenuRadioGroup,
  DropdownMenuRadioItem,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { api } from '@/lib/api'
import { DEFAULT_LANGUAGE, LANGUAGES } from '@/lib/i18n'
import { sessionStore, setUser } from '@/stores/session'
import type { User } from '@/types/api'

/**
 * Switches the console's language; a signed-in user's choice is also stored on the account
 * (PUT /api/user/self), so the e-mails the site sends them are written in it.
 */
function chooseLanguage(i18n: { changeLanguage: (lng: string) => Promise<unknown> }, lng: string) {
  void i18n.changeLanguage(lng)
  const user = sessionStore.get().user
  if (user && user.language !== lng) {
    api
      .put<User>('/api/user/self', { language: lng })
      .then(setUser)
      .catch(() => {
        // The console still switches; the account keeps its earlier language.
      })
  }
}

export function LanguageSwitcher() {
  const { t, i18n } = useTranslation()
  const current = i18n.resolvedLanguage ?? DEFAULT_LANGUAGE
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button
          variant="ghost"
          size="icon"
          aria-label={t('common:language.label')}
          title={t('common:language.label')}
          data-testid="language-switcher"
        >
          <LanguagesIcon />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end">
        <DropdownMenuLabel>{t('common:language.label')}</DropdownMenuLabel>
        <DropdownMenuSeparator />
        <DropdownMenuRadioGroup value={current} onValueChange={(lng) => chooseLanguage(i18n, lng)}>
          {LANGUAGES.map((lng) => (
            <DropdownMenuRadioItem key={lng} value={lng} data-testid={`language-${lng}`}>
              {t(`common:language.${lng}`)}
            </DropdownMenuRadioItem>
          ))}
        </DropdownMenuRadioGroup>
      </DropdownMenuContent>
    </DropdownMenu>
  )
}
