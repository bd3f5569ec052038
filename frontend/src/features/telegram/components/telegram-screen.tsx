import { useState } from 'react'
import { TelegramMenuPanel } from './telegram-menu-panel'
import { TelegramStatusCard } from './telegram-status-card'

/**
 * The Telegram bot (root): its status with the menu reload, and the custom menu. A change made
 * here asks for a reload until one succeeds, even before the status is read again.
 */
export function TelegramScreen() {
  const [menuChanged, setMenuChanged] = useState(false)
  return (
    <div className="grid grid-cols-1 gap-6">
      <TelegramStatusCard menuChanged={menuChanged} onReloaded={() => setMenuChanged(false)} />
      <TelegramMenuPanel onChanged={() => setMenuChanged(true)} />
    </div>
  )
}
