import { http, HttpResponse } from 'msw'

export const VALID_CODE = 'a'.repeat(32)

/** One valid code worth 1 000 000 quota; anything else is refused like the server does. */
export const topupHandlers = [
  http.post('*/api/user/topup', async ({ request }) => {
    const { key } = (await request.json()) as { key?: string }
    if (key?.trim().toLowerCase() === VALID_CODE) {
      return HttpResponse.json({ success: true, message: '', data: { quota: 1_000_000, balance: 251_000_000, group: 'default' } })
    }
    return HttpResponse.json(
      { success: false, message: 'the code is invalid or has already been used', code: 'invalid_redemption_code' },
      { status: 400 },
    )
  }),
]
