import { BirdIcon, GitBranchIcon, KeyRoundIcon, MailIcon, MessageCircleIcon, SendIcon, type LucideProps } from 'lucide-react'

/** The sign-in methods an account can have, beyond its password. */
export type SignInMethod = 'email' | 'github' | 'oidc' | 'lark' | 'wechat' | 'telegram'

const ICONS = {
  email: MailIcon,
  github: GitBranchIcon,
  oidc: KeyRoundIcon,
  lark: BirdIcon,
  wechat: MessageCircleIcon,
  telegram: SendIcon,
} as const

/** One icon per sign-in method, the same on the login screen and in the profile. */
export function ProviderIcon({ method, ...props }: { method: SignInMethod } & LucideProps) {
  const Icon = ICONS[method]
  return <Icon aria-hidden {...props} />
}
