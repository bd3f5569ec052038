import { MenuIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { Button } from '@/components/ui/button'
import { DropdownMenu, DropdownMenuContent, DropdownMenuItem, DropdownMenuTrigger } from '@/components/ui/dropdown-menu'

/** The public top bar's links on small screens (spec section 2.1), about included. */
export function PublicMobileMenu() {
  const { t } = useTranslation()
  const links = [
    { to: '/', label: t('common:nav.home') },
    { to: '/price', label: t('public:nav.price') },
    { to: '/guides', label: t('docs:nav.guides') },
    { to: '/tools', label: t('docs:nav.tools') },
    { to: '/about', label: t('public:nav.about') },
  ]
  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button
          variant="ghost"
          size="icon"
          className="sm:hidden"
          aria-label={t('public:nav.menu')}
          title={t('public:nav.menu')}
          data-testid="public-mobile-menu"
        >
          <MenuIcon />
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="start">
        {links.map((l) => (
          <DropdownMenuItem key={l.to} asChild>
            <Link to={l.to}>{l.label}</Link>
          </DropdownMenuItem>
        ))}
      </DropdownMenuContent>
    </DropdownMenu>
  )
}
