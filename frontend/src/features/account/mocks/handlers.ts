import { http, HttpResponse } from 'msw'

export const RESET_PASSWORD = 'N3wPassw0rd!'

const ok = (data: unknown = null, message = '') => HttpResponse.json({ success: true, message, data })

export const accountHandlers = [
  http.post('*/api/user/register', async ({ request }) => {
    const body = (await request.json()) as { username: string }
    if (body.username === 'taken') {
      return HttpResponse.json({ success: false, message: 'this username is already taken', code: 'username_taken' }, { status: 409 })
    }
    return HttpResponse.json({ success: true, message: '', data: { id: 5, username: body.username } }, { status: 201 })
  }),
  http.get('*/api/verification', () => ok(null, 'verification code sent')),
  http.get('*/api/reset_password', () => ok(null, 'if an account uses this address, a reset link has been sent to it')),
  http.post('*/api/user/reset', async ({ request }) => {
    const body = (await request.json()) as { token: string }
    if (body.token !== 'good') {
      return HttpResponse.json({ success: false, message: 'the reset link is invalid or has expired', code: 'invalid_reset_link' }, { status: 400 })
    }
    return ok(RESET_PASSWORD)
  }),
]
