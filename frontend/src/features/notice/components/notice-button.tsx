import { MegaphoneIcon } from 'lucide-react'
import { useTranslation } from 'react-i18next'
import { Button } from '@/components/ui/button'
import { openNotice } from '../api/notice'

/** The header's notice button: opens the announcement again. */
export function NoticeButton() {
  const { t } = useTranslation()
  return (
    <Button
      variant="ghost"
      size="icon"
      onClick={openNotice}
      aria-label={t('common:notice.title')}
      title={t('common:notice.title')}
      data-testid="notice-button"
    >
      <MegaphoneIcon />
    </Button>
  )
}
