import i18n from 'i18next'
import { describe, expect, it } from 'vitest'
import { createLoginSchema } from './schemas'

function messages(result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) {
  return Object.fromEntries((result.error?.issues ?? []).map((i) => [String(i.path[0]), i.message]))
}

describe('login schema', () => {
  it('requires username-or-email and password, with translated messages', () => {
    const schema = createLoginSchema(i18n.t)
    const result = schema.safeParse({ username: '', password: '' })
    expect(result.success).toBe(false)
    expect(messages(result)).toEqual({
      username: '请输入用户名或邮箱',
      password: '请输入密码',
    })
  })

  it('treats a blank username as missing and trims it', () => {
    const schema = createLoginSchema(i18n.t)
    expect(messages(schema.safeParse({ username: '   ', password: 'x' }))).toEqual({
      username: '请输入用户名或邮箱',
    })
    expect(schema.parse({ username: '  root ', password: ' pw ' })).toEqual({ username: 'root', password: ' pw ' })
  })

  it('follows the current language', async () => {
    await i18n.changeLanguage('en')
    const en = messages(createLoginSchema(i18n.t).safeParse({ username: '', password: '' }))
    expect(en).toEqual({
      username: 'Please enter your username or e-mail',
      password: 'Please enter your password',
    })
    await i18n.changeLanguage('ja')
    expect(messages(createLoginSchema(i18n.t).safeParse({ username: 'a', password: '' }))).toEqual({
      password: 'パスワードを入力してください',
    })
  })
})
