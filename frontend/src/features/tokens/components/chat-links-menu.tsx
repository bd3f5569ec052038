import { useQueryClient } from '@tanstack/react-query'
import { MessageSquareIcon } from 'lucide-react'
import { useMemo } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router'
import { Button } from '@/components/ui/button'
import { DropdownMenu, DropdownMenuContent, DropdownMenuItem, DropdownMenuLabel, DropdownMenuTrigger } from '@/components/ui/dropdown-menu'
import { fillChatLink, isWebLink, parseChatLinks, serverAddress, type ChatLink } from '@/lib/chat-links'
import { useSiteInfo } from '@/stores/site'
import { getTokenKeyQueryOptions } from '../api/get-token-key'

/** Where a filled chat link goes: a new tab for web clients. */
export const openChat = { web: (url: string) => window.open(url, '_blank', 'noopener,noreferrer') }

/**
 * "Chat" for a key (spec sections 1 and 3): the site's chat-client links with {key} and
 * {server} filled in. Web clients open in a new tab; an app's own scheme goes through /jump.
 * Nothing is shown when the site lists no chat clients.
 */
export function ChatLinksMenu({ tokenId, tokenName }: { tokenId: number; tokenName: string }) {
  const { t } = useTranslation()
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const { chat_links, server_address } = useSiteInfo()
  const links = useMemo(() => parseChatLinks(chat_links), [chat_links])
  if (links.length === 0) return null

  const open = async (link: ChatLink) => {
    let key: string
    try {
      key = await queryClient.fetchQuery(getTokenKeyQueryOptions(tokenId))
    } catch {
      return // the central handler has said why
    }
    const url = fillChatLink(link.url, key, serverAddress(server_address, window.location.origin))
    if (isWebLink(url)) openChat.web(url)
    else void navigate(`/jump?url=${encodeURIComponent(url)}`)
  }

  return (
    <DropdownMenu>
      <DropdownMenuTrigger asChild>
        <Button
          variant="ghost"
          size="sm"
          aria-label={t('tokens:chat.open', { name: tokenName })}
          data-testid={`token-chat-${tokenId}`}
        >
          <MessageSquareIcon />
          <span className="hidden lg:inline">{t('tokens:chat.label')}</span>
        </Button>
      </DropdownMenuTrigger>
      <DropdownMenuContent align="end">
        <DropdownMenuLabel>{t('tokens:chat.title')}</DropdownMenuLabel>
        {links.map((l) => (
          <DropdownMenuItem key={`${l.sort}-${l.name}`} onSelect={() => void open(l)} data-testid="token-chat-link">
            {l.name}
          </DropdownMenuItem>
        ))}
      </DropdownMenuContent>
    </DropdownMenu>
  )
}
