import { http, HttpResponse } from 'msw'
import { mockRoot, mockSignedIn, resetAuthMocks } from '@/features/auth/mocks/handlers'

export const ACCESS_TOKEN = 'a'.repeat(32)

export const profileHandlers = [
  http.put('*/api/user/self', async ({ request }) => {
    const body = (await request.json()) as Record<string, string>
    if (body.password && body.original_password !== 'old-password') {
      return HttpResponse.json(
        { success: false, message: 'the current password is wrong; it is needed to set a new one', code: 'wrong_original_password' },
        { status: 400 },
      )
    }
    const { password: _p, original_password: _o, ...fields } = body
    return HttpResponse.json({ success: true, message: '', data: { ...mockRoot, ...fields } })
  }),
  http.post('*/api/user/token', () => HttpResponse.json({ success: true, message: '', data: ACCESS_TOKEN })),
  http.delete('*/api/user/binding/:provider', ({ params }) => {
    const provider = String(params.provider)
    if (!['github', 'oidc', 'lark', 'wechat', 'telegram'].includes(provider)) {
      return HttpResponse.json({ success: false, message: 'unknown sign-in provider', code: 'invalid_provider' }, { status: 400 })
    }
    // Telegram's id is a number (0: not bound); the others are text.
    const user = { ...(mockSignedIn() ?? mockRoot), [`${provider}_id`]: provider === 'telegram' ? 0 : '' }
    resetAuthMocks(user)
    return HttpResponse.json({ success: true, message: '', data: user })
  }),
]
