import { zodResolver } from '@hookform/resolvers/zod'
import { useMemo } from 'react'
import { useForm } from 'react-hook-form'
import { useTranslation } from 'react-i18next'
import { z } from 'zod'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '@/components/ui/dialog'
import { TextField } from '@/components/form-kit'
import { Form } from '@/components/ui/form'
import { Spinner } from '@/components/ui/spinner'

export interface WechatCodeDialogProps {
  open: boolean
  onOpenChange: (open: boolean) => void
  /** The site's QR code of the WeChat official account (site info `wechat_qrcode`). */
  qrcode: string
  /** Called with the trimmed code; the caller sends it (GET /api/oauth/wechat) and closes the dialog. */
  onSubmit: (code: string) => void
  pending?: boolean
  /** The submit button's label: sign in on the login screen, bind in the profile. */
  submitLabel: string
}

/**
 * WeChat sign-in and binding (spec 2.1): scan the official account's QR code, send it
 * "验证码", type the code it answers. A refused code is reported by the central error handler.
 */
export function WechatCodeDialog({ open, onOpenChange, qrcode, onSubmit, pending, submitLabel }: WechatCodeDialogProps) {
  const { t } = useTranslation()
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent closeLabel={t('common:actions.close')} className="max-w-sm" data-testid="wechat-dialog">
        <DialogHeader>
          <DialogTitle>{t('auth:wechat.title')}</DialogTitle>
          <DialogDescription>{t('auth:wechat.description')}</DialogDescription>
        </DialogHeader>
        {qrcode ? (
          <img
            src={qrcode}
            alt={t('auth:wechat.qrcodeAlt')}
            className="mx-auto size-48 rounded-md border bg-white object-contain"
            data-testid="wechat-qrcode"
          />
        ) : (
          <p className="rounded-md bg-muted p-3 text-center text-sm text-muted-foreground" data-testid="wechat-no-qrcode">
            {t('auth:wechat.noQrcode')}
          </p>
        )}
        <ol className="list-decimal space-y-1 pl-5 text-sm">
          <li>{t('auth:wechat.step1')}</li>
          <li>{t('auth:wechat.step2')}</li>
          <li>{t('auth:wechat.step3')}</li>
        </ol>
        {/* Mounted with the dialog: every opening starts with an empty code. */}
        <WechatCodeForm onSubmit={onSubmit} pending={pending} submitLabel={submitLabel} />
      </DialogContent>
    </Dialog>
  )
}

function WechatCodeForm({ onSubmit, pending, submitLabel }: Pick<WechatCodeDialogProps, 'onSubmit' | 'pending' | 'submitLabel'>) {
  const { t } = useTranslation()
  const schema = useMemo(() => z.object({ code: z.string().trim().min(1, t('auth:wechat.codeRequired')) }), [t])
  const form = useForm<z.input<typeof schema>, unknown, z.output<typeof schema>>({
    resolver: zodResolver(schema),
    defaultValues: { code: '' },
  })
  const submit = form.handleSubmit(({ code }) => {
    if (!pending) onSubmit(code)
  })
  return (
    <Form {...form}>
      <form onSubmit={submit} noValidate className="grid gap-4" data-testid="wechat-form">
        <TextField control={form.control} name="code" label={t('auth:wechat.code')} autoComplete="one-time-code" placeholder={t('auth:wechat.codePlaceholder')} />
        <DialogFooter>
          <Button type="submit" disabled={pending} data-testid="wechat-submit">
            {pending && <Spinner />}
            {submitLabel}
          </Button>
        </DialogFooter>
      </form>
    </Form>
  )
}
