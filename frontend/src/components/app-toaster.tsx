import { Toaster } from 'sonner'
import { MOBILE_MAX_WIDTH } from '@/config'
import { useMediaQuery } from '@/hooks/use-media-query'
import { useTheme } from '@/stores/theme'

/** At most 3 toasts, top right; bottom centre on mobile (spec section 9). */
export function AppToaster() {
  const theme = useTheme()
  const isMobile = useMediaQuery(`(max-width: ${MOBILE_MAX_WIDTH}px)`)
  return (
    <Toaster
      visibleToasts={3}
      position={isMobile ? 'bottom-center' : 'top-right'}
      theme={theme}
      // Below the 64px top bar, so toasts never cover its controls.
      offset={{ top: 76, right: 16 }}
      richColors
      closeButton
    />
  )
}
