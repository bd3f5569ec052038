import { http, HttpResponse } from 'msw'
import { toast } from 'sonner'
import { beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { mockRoot } from '@/features/auth/mocks/handlers'
import { sessionStore, setUser } from '@/stores/session'
import { server } from '@/test/server'
import { api, ApiError, HttpError } from './api'
import { handleApiError } from './errors'

describe('central error handler', () => {
  let error: MockInstance<typeof toast.error>
  let info: MockInstance<typeof toast.info>

  beforeEach(() => {
    error = vi.spyOn(toast, 'error')
    info = vi.spyOn(toast, 'info')
  })

  it('429 -> too many requests', () => {
    handleApiError(new HttpError(429, 'whatever'))
    expect(error).toHaveBeenCalledWith('错误：请求次数过多，请稍后再试！', expect.objectContaining({ duration: 5000 }))
    expect(info).not.toHaveBeenCalled()
  })

  it('429 with a code the console knows -> that refusal, not rate limiting', () => {
    handleApiError(new HttpError(429, 'too many unpaid orders', 'too many unpaid orders', 'payment_too_many_orders'))
    expect(error).toHaveBeenCalledWith(
      '错误：未支付的订单过多（最多 5 笔）：请先完成其中一笔的支付，或等待它们过期（30 分钟后）再下单。',
      expect.anything(),
    )
    handleApiError(new HttpError(429, 'slow down', 'slow down', 'brand_new_code'))
    expect(error).toHaveBeenLastCalledWith('错误：请求次数过多，请稍后再试！', expect.anything())
  })

    it('500 -> server error', () => {
    handleApiError(new HttpError(500, 'boom'))
    expect(error).toHaveBeenCalledWith('错误：服务器内部错误，请联系管理员！', expect.anything())
  })

  it('405 -> demo-site notice as info, 3 s', () => {
    handleApiError(new HttpError(405, 'Method Not Allowed'))
    expect(info).toHaveBeenCalledWith('本站仅作演示之用，无服务端！', expect.objectContaining({ duration: 3000 }))
    expect(error).not.toHaveBeenCalled()
  })

  it('other HTTP status -> "错误：" + the server message', () => {
    handleApiError(new HttpError(403, '无权进行此操作', '无权进行此操作'))
    expect(error).toHaveBeenCalledWith('错误：无权进行此操作', expect.anything())
  })

  it('non-HTTP error -> "错误：" + its text', () => {
    handleApiError(new TypeError('Failed to fetch'))
    expect(error).toHaveBeenCalledWith('错误：Failed to fetch', expect.anything())
    handleApiError(new ApiError('令牌已过期'))
    expect(error).toHaveBeenCalledWith('错误：令牌已过期', expect.anything())
  })

  it('translates the stable codes the console knows; others keep the server message', () => {
    handleApiError(new HttpError(400, 'complete the human check (Turnstile) first', 'complete the human check (Turnstile) first', 'turnstile_required'))
    expect(error).toHaveBeenCalledWith('错误：请先完成人机验证。', expect.anything())
    handleApiError(new ApiError('only root may point a channel at a loopback address', 'private_destination'))
    expect(error).toHaveBeenCalledWith('错误：只有超级管理员可以把渠道指向本机、内网或链路本地地址。', expect.anything())
    handleApiError(new HttpError(409, 'this e-mail address is already in use', 'this e-mail address is already in use', 'email_taken'))
    expect(error).toHaveBeenCalledWith('错误：该邮箱已被使用。', expect.anything())
    // A code this console does not know yet: the server's message is better than nothing.
    handleApiError(new HttpError(400, 'a brand new refusal', 'a brand new refusal', 'brand_new_code'))
    expect(error).toHaveBeenCalledWith('错误：a brand new refusal', expect.anything())
  })

  it("a code about an upstream's answer keeps that answer in the translated message", () => {
    handleApiError(new HttpError(502, 'upstream 401: invalid api key', 'upstream 401: invalid api key', 'channel_test_failed'))
    expect(error).toHaveBeenCalledWith('错误：渠道测试失败：upstream 401: invalid api key', expect.anything())
  })

  it('uses the message as toast id, so a repeat is not stacked', () => {
    handleApiError(new HttpError(500, 'x'))
    handleApiError(new HttpError(500, 'y'))
    const ids = error.mock.calls.map((call) => (call[1] as { id?: string }).id)
    expect(ids).toEqual(['错误：服务器内部错误，请联系管理员！', '错误：服务器内部错误，请联系管理员！'])
  })

  it('speaks the current language', async () => {
    const { default: i18n } = await import('i18next')
    await i18n.changeLanguage('en')
    handleApiError(new HttpError(429, ''))
    expect(error).toHaveBeenCalledWith('Error: Too many requests, please try again later!', expect.anything())
  })
})

describe('api client', () => {
  it('unwraps data and sends the session cookie', async () => {
    let credentials: RequestCredentials | undefined
    server.use(
      http.get('*/api/echo', ({ request }) => {
        credentials = request.credentials
        return HttpResponse.json({ success: true, message: '', data: { ok: 1 } })
      }),
    )
    await expect(api.get('/api/echo')).resolves.toEqual({ ok: 1 })
    expect(credentials).toBe('include')
  })

  it('posts JSON', async () => {
    server.use(
      http.post('*/api/echo', async ({ request }) =>
        HttpResponse.json({ success: true, message: '', data: await request.json() }),
      ),
    )
    await expect(api.post('/api/echo', { a: 'b' })).resolves.toEqual({ a: 'b' })
  })

  it('throws ApiError with message and code on success:false', async () => {
    server.use(
      http.get('*/api/echo', () => HttpResponse.json({ success: false, message: 'nope', code: 'quota_exceeded' })),
    )
    const err = await api.get('/api/echo').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ message: 'nope', code: 'quota_exceeded' })
  })

  it('throws HttpError carrying the server message of an error body', async () => {
    server.use(http.get('*/api/echo', () => HttpResponse.json({ success: false, message: '渠道不存在' }, { status: 404 })))
    const err = await api.get('/api/echo').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(HttpError)
    expect(err).toMatchObject({ status: 404, message: '渠道不存在' })
  })

  it('falls back to the error text when the body has no message', async () => {
    server.use(http.get('*/api/echo', () => new HttpResponse('bad gateway', { status: 502 })))
    const err = await api.get('/api/echo').catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 502, message: 'Request failed with status code 502' })
  })

  it('rejects a non-JSON success body instead of returning text as data', async () => {
    server.use(http.get('*/api/echo', () => HttpResponse.html('<!doctype html><html></html>')))
    await expect(api.get('/api/echo')).rejects.toMatchObject({ name: 'ApiError', message: 'Unexpected response from /api/echo' })
  })

  it('401 clears the stored user and the user in app state', async () => {
    setUser(mockRoot)
    expect(localStorage.getItem('user')).not.toBeNull()
    server.use(http.get('*/api/echo', () => HttpResponse.json({ success: false, message: '未登录' }, { status: 401 })))
    await expect(api.get('/api/echo')).rejects.toBeInstanceOf(HttpError)
    expect(localStorage.getItem('user')).toBeNull()
    expect(sessionStore.get()).toEqual({ user: null, endedBy: 'unauthorized', userGroup: null })
  })
})
