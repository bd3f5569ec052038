import { render, screen } from '@testing-library/react'
import QRCode from 'qrcode'
import { describe, expect, it } from 'vitest'
import { QR_CODE_OPTIONS, QrCode, qrCodeImage } from './qr-code'

const labels = { label: '扫码支付', pendingLabel: '正在生成二维码…', failedLabel: '无法生成二维码', testId: 'qr' }

describe('QR code', () => {
  it('is an SVG image of the content, drawn without a canvas', async () => {
    const src = await qrCodeImage('weixin://wxpay/bizpayurl?pr=abc')
    expect(src.startsWith('data:image/svg+xml;charset=utf-8,')).toBe(true)
    const svg = decodeURIComponent(src.slice(src.indexOf(',') + 1))
    expect(svg).toBe(await QRCode.toString('weixin://wxpay/bizpayurl?pr=abc', QR_CODE_OPTIONS))
    // Error correction M: version 3 (29 modules) holds these 31 bytes; one module of margin on each side.
    const modules = QRCode.create('weixin://wxpay/bizpayurl?pr=abc', { errorCorrectionLevel: 'M' }).modules.size
    expect(svg).toContain(`viewBox="0 0 ${modules + 2} ${modules + 2}"`)
    expect(await qrCodeImage('weixin://wxpay/bizpayurl?pr=abd')).not.toBe(src)
  })

  it('shows progress while it is drawn, then the image with its label', async () => {
    render(<QrCode content="https://qr.alipay.com/bax00000" {...labels} />)
    expect(screen.getByTestId('qr-pending')).toHaveTextContent('正在生成二维码…')
    const img = await screen.findByRole('img', { name: '扫码支付' })
    expect(img).toHaveAttribute('src', await qrCodeImage('https://qr.alipay.com/bax00000'))
    expect(screen.queryByTestId('qr-pending')).not.toBeInTheDocument()
  })

  it('draws the new content when it changes, never the old code for it', async () => {
    const view = render(<QrCode content="weixin://wxpay/bizpayurl?pr=one" {...labels} />)
    await screen.findByRole('img')
    view.rerender(<QrCode content="weixin://wxpay/bizpayurl?pr=two" {...labels} />)
    expect(screen.queryByRole('img')).not.toBeInTheDocument()
    expect(await screen.findByRole('img')).toHaveAttribute('src', await qrCodeImage('weixin://wxpay/bizpayurl?pr=two'))
  })

  it('says so when the content is too long for a code', async () => {
    render(<QrCode content={'x'.repeat(5000)} {...labels} />)
    expect(await screen.findByTestId('qr-failed')).toHaveTextContent('无法生成二维码')
    expect(screen.queryByRole('img')).not.toBeInTheDocument()
  })
})
