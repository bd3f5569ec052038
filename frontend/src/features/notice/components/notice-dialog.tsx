import { useEffect } from 'react'
import { useTranslation } from 'react-i18next'
import { Dialog, DialogContent, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { closeNotice, receiveNotice, useNotice, useNoticeQuery } from '../api/notice'

/**
 * Fetches the notice at start and shows the "公告" dialog per the notice rule; the header's
 * notice button opens it again. The notice is the operator's own HTML.
 */
export function NoticeDialog() {
  const { t } = useTranslation()
  const { data } = useNoticeQuery()
  const { text, open } = useNotice()

  useEffect(() => {
    if (data !== undefined) receiveNotice(data)
  }, [data])

  return (
    <Dialog open={open} onOpenChange={(o) => (o ? undefined : closeNotice())}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-2xl" data-testid="notice-dialog">
        <DialogHeader>
          <DialogTitle>{t('common:notice.title')}</DialogTitle>
        </DialogHeader>
        {text ? (
          <div
            className="max-h-[60vh] overflow-y-auto text-sm break-words [&_a]:text-primary [&_a]:underline [&_h1]:text-lg [&_h1]:font-semibold [&_h2]:font-semibold [&_li]:my-1 [&_ol]:list-decimal [&_ol]:pl-5 [&_p]:my-2 [&_ul]:list-disc [&_ul]:pl-5"
            data-testid="notice-content"
            // The operator's announcement (setting Notice), rendered as HTML: the server cleans it
            // to an allow-list when it is saved and when it is served (docs/security.md).
            dangerouslySetInnerHTML={{ __html: text }}
          />
        ) : (
          <p className="text-muted-foreground" data-testid="notice-empty">
            {t('common:notice.empty')}
          </p>
        )}
      </DialogContent>
    </Dialog>
  )
}
