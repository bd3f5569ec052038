import { ExternalLinkIcon, MenuIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { Button } from '@/components/ui/button'
import { DropdownMenu, DropdownMenuContent, DropdownMenuItem, DropdownMenuTrigger } from '@/components/ui/dropdown-menu'
import type { PublicLink } from './public-links'

/** The public top bar's links on small screens (spec section 2.1), about included. */
export function PublicMobileMenu({ links }: { links: PublicLink[] }) {
  const { t } = useTranslation()
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
          <DropdownMenuItem key={l.id} asChild>
            {l.external ? (
              <a href={l.to} target="_blank" rel="noopener noreferrer" data-testid={`mobile-nav-${l.id}`}>
                {l.label}
                <ExternalLinkIcon aria-hidden className="ml-auto size-3.5" />
              </a>
            ) : (
              <Link to={l.to} data-testid={`mobile-nav-${l.id}`}>
                {l.label}
              </Link>
            )}
          </DropdownMenuItem>
        ))}
      </DropdownMenuContent>
    </DropdownMenu>
  )
}
