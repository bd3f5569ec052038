import { MoonIcon, SunIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { toggleTheme, useTheme } from '@/stores/theme'

export function ThemeToggle() {
  const { t } = useTranslation()
  const theme = useTheme()
  const label = theme === 'dark' ? t('common:theme.toLight') : t('common:theme.toDark')
  return (
    <Button
      variant="ghost"
      size="icon"
      onClick={toggleTheme}
      aria-label={label}
      title={label}
      data-testid="theme-toggle"
    >
      {theme === 'dark' ? <SunIcon /> : <MoonIcon />}
    </Button>
  )
}
