// The operator's and the user's journey against a running Switchboard (scripts/e2e.sh starts
// it on a fresh SQLite database, with a mock upstream at MOCK_URL):
//   root signs in, creates a channel to the mock upstream, makes a redemption code, chats in the
//   playground and finds the exchange in the logs with its cost, then visits every console
//   screen (screenshots); a visitor registers with the code e-mailed to them; a normal user, on a
//   390 px wide phone, sees no admin items, cannot
//   open admin routes, redeems the code and sees the balance change, and binds an e-mail address
//   with the code that the journey's mail server (scripts/smtp-sink.py, MAIL_DIR) received.
//
//   BASE_URL=... MOCK_URL=... ROOT_PASSWORD=... SMTP_PORT=... MAIL_DIR=... npm run e2e
import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const BASE_URL = process.env.BASE_URL?.replace(/\/+$/, '')
const MOCK_URL = process.env.MOCK_URL?.replace(/\/+$/, '')
const ROOT_PASSWORD = process.env.ROOT_PASSWORD
const SMTP_PORT = process.env.SMTP_PORT
const MAIL_DIR = process.env.MAIL_DIR
const GITHUB_URL = process.env.GITHUB_URL?.replace(/\/+$/, '')
const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url))
const TIMEOUT = 15_000

/** @type {import('playwright-core').Browser | undefined} */
let browser
/** @type {import('playwright-core').Page} */
let page

let broken = false
function step(t, name, fn) {
  return t.test(name, async () => {
    if (broken) throw new Error('not run: an earlier step of the journey failed')
    try {
      await fn()
    } catch (err) {
      broken = true
      await shot(`failed-operator-${name.replace(/\W+/g, '-')}`).catch(() => {})
      throw err
    }
  })
}

async function shot(name) {
  await page.waitForTimeout(300)
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true })
}

/** The page is no wider than the window (wide tables scroll inside their card). */
async function assertNoHorizontalOverflow(what) {
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])
  assert.ok(scroll <= inner, `${what} is wider than the window: ${scroll} > ${inner}`)
}

/** A dollar amount as the console shows costs: 2 decimals at least, 6 significant digits. */
function sixSignificant(v) {
  if (v === 0) return '0.00'
  const decimals = Math.min(20, Math.max(2, 5 - Math.floor(Math.log10(Math.abs(v)))))
  return v.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1')
}

/** A received mail as text: its headers, then its body decoded (the server sends base64). */
function readMail(path) {
  const raw = readFileSync(path, 'utf8').replace(/\r\n/g, '\n')
  const split = raw.indexOf('\n\n')
  if (split < 0 || !/content-transfer-encoding: base64/i.test(raw.slice(0, split))) return raw
  const body = Buffer.from(raw.slice(split + 2).replace(/\s+/g, ''), 'base64').toString('utf8')
  return `${raw.slice(0, split)}\n\n${body}`
}

/** The newest mail the journey's mail server received after `before` mails, with its code. */
async function nextMail(before, to) {
  for (let i = 0; i < 100; i++) {
    const files = readdirSync(MAIL_DIR).sort()
    if (files.length > before) {
      const mail = readMail(`${MAIL_DIR}/${files[files.length - 1]}`)
      assert.ok(mail.includes(to), `the mail is for ${to}`)
      const code = mail.match(/<strong>(\d{6})<\/strong>/)?.[1]
      assert.match(code ?? '', /^\d{6}$/, 'the mail holds a six-digit code')
      return code
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no mail for ${to} arrived`)
}

async function newPage(viewport, locale = 'zh-CN') {
  const context = await browser.newContext({ locale, viewport })
  context.setDefaultTimeout(TIMEOUT)
  const p = await context.newPage()
  p.on('pageerror', (err) => console.error('[page error]', err.message))
  return p
}

async function signIn(username, password) {
  await page.goto(`${BASE_URL}/login`)
  await page.locator('input[name="username"]').fill(username)
  await page.locator('input[name="password"]').fill(password)
  await page.locator('form[data-testid="login-form"] button[type="submit"]').click()
  await page.waitForURL((url) => url.pathname.startsWith('/panel'))
}

/** The API as the signed-in page (its session cookie). */
async function apiCall(method, path, data) {
  const res = await page.request.fetch(`${BASE_URL}${path}`, { method, data })
  const body = await res.json()
  assert.ok(body.success, `${method} ${path}: ${JSON.stringify(body)}`)
  return body.data
}

before(async () => {
  assert.ok(BASE_URL, 'BASE_URL is not set')
  assert.ok(MOCK_URL, 'MOCK_URL is not set: scripts/e2e.sh starts the mock upstream')
  assert.ok(ROOT_PASSWORD, 'ROOT_PASSWORD is not set')
  mkdirSync(SCREENSHOTS, { recursive: true })
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  })
  page = await newPage({ width: 1280, height: 800 })
})

after(async () => {
  await browser?.close()
})

test('operator and user journey', async (t) => {
  const channelName = `mock-${Date.now()}`
  let code = ''
  const userName = `e2e${Date.now() % 1_000_000}`
  const userPassword = 'e2e-user-password'

  await step(t, 'root signs in and creates a channel to the mock upstream', async () => {
    await signIn('root', ROOT_PASSWORD)
    await page.getByTestId('menu-channel').click()
    await page.waitForURL((url) => url.pathname === '/panel/channel')
    await page.getByTestId('channel-create').click()
    const dialog = page.getByTestId('channel-form-dialog')
    await dialog.waitFor()
    await dialog.locator('input[name="name"]').fill(channelName)
    await dialog.getByTestId('channel-form-type').selectOption('1')
    await dialog.locator('textarea[name="key"]').fill('sk-mock-ok')
    await dialog.locator('input[name="base_url"]').fill(MOCK_URL)
    await dialog.locator('textarea[name="models"]').fill('gpt-4o-mini,e2e-expensive')
    await dialog.locator('input[name="group"]').fill('default')
    await shot('20-channel-form')
    await dialog.getByTestId('channel-form-submit').click()
    await dialog.waitFor({ state: 'detached' })
    const row = page.locator('[data-testid^="channel-row-"]', { hasText: channelName })
    await row.waitFor()
    await shot('21-channels')
  })

  await step(t, 'root makes a redemption code worth $2', async () => {
    // Redemption codes sit in the "payment settings" section of the sidebar.
    await page.getByTestId('menu-collapse-payment_settings').click()
    await page.getByTestId('menu-redemption').click()
    await page.waitForURL((url) => url.pathname === '/panel/redemption')
    await page.getByTestId('redemption-create').click()
    const dialog = page.getByTestId('redemption-form-dialog')
    await dialog.waitFor()
    await dialog.locator('input[name="name"]').fill('e2e-code')
    // Typed in dollars (the site shows money): $2.
    await dialog.locator('input[name="quota"]').fill('2')
    await dialog.getByTestId('redemption-form-submit').click()
    const codes = page.getByTestId('redemption-codes')
    await codes.waitFor()
    code = ((await codes.textContent()) ?? '').match(/[A-Za-z0-9]{32}/)?.[0] ?? ''
    assert.match(code, /^[A-Za-z0-9]{32}$/, 'the new code is shown')
    await shot('22-redemption-codes')
    await page.keyboard.press('Escape')
  })

  await step(t, 'root chats in the playground through the channel', async () => {
    // A dear model, so that the cost shows in dollars with two decimals.
    await apiCall('POST', '/api/prices', { model: 'e2e-expensive', type: 'tokens', channel_type: 1, input: 2000, output: 2000 })
    await page.getByTestId('menu-playground').click()
    await page.waitForURL((url) => url.pathname === '/panel/playground')
    const input = page.getByTestId('playground-input')
    await page.waitForFunction(() => !document.querySelector('[data-testid="playground-input"]')?.disabled)
    await page.getByTestId('playground-model').selectOption('e2e-expensive')
    await input.fill('Hello from the browser')
    await page.getByTestId('playground-send').click()
    const answer = page.getByTestId('playground-message-assistant').last()
    await page.getByTestId('playground-usage').waitFor()
    assert.match((await answer.textContent()) ?? '', /\S/, 'the mock answered')
    await shot('23-playground')
  })

  await step(t, 'the exchange is in the logs with its cost', async () => {
    await page.getByTestId('menu-log').click()
    await page.waitForURL((url) => url.pathname === '/panel/log')
    // The consume log is written by the ledger flush (about a second): reload until it shows.
    const row = page.locator('[data-testid="logs-table"] tbody tr', { hasText: 'e2e-expensive' }).first()
    for (let i = 0; i < 20 && !(await row.isVisible()); i++) {
      await page.waitForTimeout(500)
      await page.reload()
      await page.getByTestId('log-filters').waitFor()
    }
    await row.waitFor()
    const cost = (await row.getByTestId('log-quota').textContent())?.trim() ?? ''
    // The same figure as the log's quota through the API, in dollars (500000 units per $1), to
    // six significant digits (never rounded to cents).
    const logs = await apiCall('GET', '/api/log?page=1&size=10&model_name=e2e-expensive')
    const quota = logs.data[0].quota
    assert.ok(quota >= 5_000, `the exchange was charged (${quota} units)`)
    assert.equal(cost, `$${sixSignificant(quota / 500_000)}`)
    // The detail says the same and how it was computed.
    await row.getByTestId('log-detail-open').click()
    const detail = page.getByTestId('log-detail')
    await detail.waitFor()
    assert.ok(((await detail.getByTestId('log-detail-quota').textContent()) ?? '').startsWith(cost))
    await detail.getByTestId('log-breakdown-input').waitFor()
    await shot('24-log-detail')
    await page.keyboard.press('Escape')
    await detail.waitFor({ state: 'detached' })
    // A model prefix filter lives in the address bar: a reload keeps it.
    await page.getByTestId('log-filter-model_name').fill('e2e-exp')
    await page.getByTestId('log-search').click()
    await page.waitForURL((url) => url.searchParams.get('model_name') === 'e2e-exp')
    await page.reload()
    await page.getByTestId('log-filters').waitFor()
    assert.equal(await page.getByTestId('log-filter-model_name').inputValue(), 'e2e-exp')
    await row.waitFor()
    assert.equal(await page.locator('[data-testid="logs-table"] tbody tr').count(), 1, 'only the e2e-expensive call')
    await page.getByTestId('log-total-quota').waitFor()
    await shot('24-logs-with-cost')
  })

  await step(t, 'at 1440 px the channel and pricing tables keep their prices and actions in view', async () => {
    await page.setViewportSize({ width: 1440, height: 900 })
    /** The heading is drawn inside the window and inside its table's scroll box. */
    const inView = async (table, heading) => {
      const box = await page.getByTestId(table).locator('thead th', { hasText: heading }).first().boundingBox()
      const frame = await page.getByTestId(table).locator('xpath=..').boundingBox()
      assert.ok(box && frame, `${table}: no ${heading} heading`)
      assert.ok(box.x >= frame.x - 1 && box.x + box.width <= frame.x + frame.width + 1, `${table}: ${heading} is cut off (${box.x}+${box.width} in ${frame.x}+${frame.width})`)
      assert.ok(box.x + box.width <= 1440, `${table}: ${heading} is outside the window`)
    }
    await page.goto(`${BASE_URL}/panel/channel`)
    await page.locator('[data-testid^="channel-row-"]').first().waitFor()
    for (const h of ['已用 / 余额', '优先级 / 权重', '操作']) await inView('channels-table', h)
    await page.goto(`${BASE_URL}/panel/pricing`)
    await page.getByTestId('price-row-e2e-expensive').waitFor()
    for (const h of ['输入价格', '输出价格', '操作']) await inView('pricing-table', h)
    await shot('25-pricing-1440')
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  await step(t, 'testing every channel names the one that failed and why', async () => {
    // A channel whose upstream refuses connections.
    await apiCall('POST', '/api/channel', {
      name: 'e2e-broken',
      type: 1,
      key: 'sk-broken',
      base_url: 'http://127.0.0.1:9',
      models: 'e2e-broken-model',
      group: 'default',
    })
    await page.goto(`${BASE_URL}/panel/channel`)
    await page.locator('[data-testid^="channel-row-"]', { hasText: 'e2e-broken' }).waitFor()
    await page.getByTestId('channel-test-all').click()
    const result = page.getByTestId('channel-test-all-result')
    await result.waitFor({ timeout: 60_000 })
    const failures = result.getByTestId('channel-test-failure')
    await failures.first().waitFor()
    assert.equal(await failures.count(), 1, 'only the broken channel failed')
    const text = (await failures.first().textContent()) ?? ''
    assert.match(text, /e2e-broken/, 'the failure names the channel')
    assert.ok(text.replace(/#\d+ e2e-broken/, '').trim().length > 0, 'and says why')
    await shot('26-test-all-failures')
    await page.keyboard.press('Escape')
    // The row says so too, with the reason.
    const row = page.locator('[data-testid^="channel-row-"]', { hasText: 'e2e-broken' })
    await row.getByTestId('channel-response').filter({ hasText: '失败' }).waitFor()
  })

  await step(t, 'every console screen of the menu renders (screenshots)', async () => {
    // Open the collapse sections so that every item is a link to click.
    for (const collapse of await page.locator('[data-testid^="menu-collapse-"]').all()) {
      if ((await collapse.getAttribute('aria-expanded')) === 'false') await collapse.click()
    }
    const items = await page.locator('[data-testid^="menu-"]').evaluateAll((els) =>
      els
        .map((e) => e.getAttribute('data-testid'))
        .filter((id) => id && !id.startsWith('menu-group-') && !id.startsWith('menu-collapse-')),
    )
    assert.ok(items.length >= 12, `root sees the whole menu, got ${items.join(', ')}`)
    for (const id of items) {
      const link = page.getByTestId(id)
      if (!(await link.isVisible())) continue
      await link.click()
      await page.waitForTimeout(400) // let the screen's data arrive (no networkidle: some screens poll)
      const heading = page.locator('main h1').first()
      await heading.waitFor()
      // The not-found page's own title (not the text "404", which a masked key may contain).
      assert.equal(await page.getByTestId('not-found-title').count(), 0, `${id} opened the not-found page`)
      assert.ok(!new URL(page.url()).pathname.endsWith('/404'), `${id} led to ${page.url()}`)
      await assertNoHorizontalOverflow(id)
      await shot(`30-${id.replace('menu-', '')}`)
    }
  })

  await step(t, 'root creates a normal user and sets up mail in one save', async () => {
    await apiCall('POST', '/api/user', { username: userName, password: userPassword })
    await apiCall('PUT', '/api/option/batch', {
      options: [
        { key: 'SMTPServer', value: '127.0.0.1' },
        { key: 'SMTPPort', value: SMTP_PORT },
        { key: 'SMTPFrom', value: 'noreply@e2e.test' },
        // GitHub sign-in against scripts/fake-github.py (GITHUB_OAUTH_URL / GITHUB_API_URL).
        { key: 'GitHubClientId', value: 'e2e-client' },
        { key: 'GitHubClientSecret', value: process.env.GITHUB_SECRET },
        { key: 'GitHubOAuthEnabled', value: true },
      ],
    })
  })

  await step(t, 'a visitor registers with the code e-mailed to them', async () => {
    await apiCall('PUT', '/api/option', { key: 'EmailVerificationEnabled', value: true })
    const visitor = await newPage({ width: 1280, height: 800 })
    const name = `r${userName}`
    const address = `${name}@e2e.test`
    await visitor.goto(`${BASE_URL}/register`)
    const form = visitor.getByTestId('register-form')
    await form.waitFor()
    await form.locator('input[name="username"]').fill(name)
    await form.locator('input[name="password"]').fill(userPassword)
    await form.locator('input[name="confirm"]').fill(userPassword)
    await form.locator('input[name="email"]').fill(address)
    const before = readdirSync(MAIL_DIR).length
    await visitor.getByTestId('register-send-code').click()
    const code = await nextMail(before, address)
    await form.locator('input[name="verification_code"]').fill(code)
    await visitor.getByTestId('register-submit').click()
    await visitor.waitForURL((url) => url.pathname === '/login')
    await visitor.context().close()
    const found = await apiCall('GET', `/api/user?keyword=${name}`)
    assert.equal((found.data ?? found).find((u) => u.username === name)?.email, address)
  })

  await step(t, 'promoting a user to administrator happens only after a confirmation', async () => {
    const promo = `p${userName}`
    await apiCall('POST', '/api/user', { username: promo, password: userPassword })
    const found = await apiCall('GET', `/api/user?keyword=${promo}`)
    const id = (found.data ?? found).find((u) => u.username === promo).id
    await page.goto(`${BASE_URL}/panel/user`)
    const row = page.getByTestId(`user-row-${id}`)
    await row.waitFor()
    await row.getByTestId('user-promote').click()
    const dialog = page.getByTestId('user-confirm-dialog')
    await dialog.waitFor()
    assert.match((await dialog.textContent()) ?? '', new RegExp(promo), 'the question names the user')
    // Cancelled: nothing changes.
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    assert.equal((await apiCall('GET', `/api/user/${id}`)).role, 1)
    await row.getByTestId('user-promote').click()
    await page.getByTestId('user-confirm-dialog-confirm').click()
    await row.getByTestId('user-role').filter({ hasText: '管理员' }).waitFor()
    assert.equal((await apiCall('GET', `/api/user/${id}`)).role, 10)
  })

  await step(t, 'on a phone, the user sees no admin item and cannot open admin routes', async () => {
    await page.context().close()
    page = await newPage({ width: 390, height: 844 })
    await signIn(userName, userPassword)
    await assertNoHorizontalOverflow('the dashboard on a phone')
    await shot('40-mobile-dashboard')
    // The sidebar is a drawer on phones.
    await page.getByTestId('sidebar-toggle').click()
    await page.getByTestId('menu-token').waitFor()
    for (const admin of ['menu-channel', 'menu-user', 'menu-redemption', 'menu-setting']) {
      assert.equal(await page.getByTestId(admin).count(), 0, `${admin} is hidden from users`)
    }
    await shot('41-mobile-menu')
    await page.keyboard.press('Escape')
    await page.goto(`${BASE_URL}/panel/channel`)
    // Told so, in place (not a not-found page), and no channel data.
    await page.getByTestId('no-permission').waitFor()
    assert.equal(await page.getByTestId('channels-table').count(), 0)
    await shot('42-mobile-admin-route-refused')
  })

  await step(t, 'the user redeems the code and the balance goes up by $2', async () => {
    await page.goto(`${BASE_URL}/panel/topup`)
    const balance = page.getByTestId('topup-balance')
    await balance.waitFor()
    const before = (await balance.textContent()) ?? ''
    await page.locator('input[name="key"]').fill(code)
    await page.getByTestId('topup-submit').click()
    await page.getByTestId('topup-result').waitFor()
    await page.waitForFunction(
      (prev) => document.querySelector('[data-testid="topup-balance"]')?.textContent !== prev,
      before,
    )
    const afterText = (await balance.textContent()) ?? ''
    assert.match(afterText, /2(\.00)?/, `balance after redeeming: ${afterText}`)
    await assertNoHorizontalOverflow('the top-up screen on a phone')
    await shot('43-mobile-topup')
    for (const path of ['/panel/token', '/panel/log', '/panel/playground', '/panel/profile']) {
      await page.goto(`${BASE_URL}${path}`)
      await page.locator('main h1').first().waitFor()
      await page.waitForTimeout(400) // let the screen's data arrive (no networkidle: some screens poll)
      await assertNoHorizontalOverflow(`${path} on a phone`)
      await shot(`44-mobile-${path.split('/').pop()}`)
    }
    const me = await apiCall('GET', '/api/user/self')
    assert.equal(me.quota, 1_000_000)
  })

  await step(t, 'a refused code is told in Chinese, never in the server\'s English', async () => {
    const res = await page.request.fetch(`${BASE_URL}/api/user/topup`, { method: 'POST', data: { key: 'not-a-real-code' } })
    const body = await res.json()
    assert.equal(body.success, false)
    assert.ok(body.message && /[a-z]{3}/.test(body.message), `the server explains in English: ${body.message}`)
    await page.goto(`${BASE_URL}/panel/topup`)
    await page.locator('input[name="key"]').fill('not-a-real-code')
    await page.getByTestId('topup-submit').click()
    await page.getByText('兑换码无效或已被使用').first().waitFor()
    const text = await page.evaluate(() => document.body.innerText)
    assert.ok(!text.includes(body.message), `the page shows the server's English: ${body.message}`)
    // Nor any other run of English words (a sentence) anywhere on the page.
    const sentence = text.match(/\b[A-Za-z]{2,}(?: [A-Za-z]{2,}){3,}/)
    assert.equal(sentence, null, `English on the Chinese page: ${sentence?.[0]}`)
    await shot('45-mobile-refused-code')
  })

  await step(t, 'the user binds an e-mail address with the code the mail server received', async () => {
    const address = `${userName}@e2e.test`
    const before = readdirSync(MAIL_DIR).length
    await page.goto(`${BASE_URL}/panel/profile`)
    const card = page.getByTestId('email-binding')
    await card.waitFor()
    await card.locator('input[name="email"]').fill(address)
    await card.getByTestId('email-send-code').click()
    // The mail goes out after the answer: wait for it to land.
    const code = await nextMail(before, address)
    await card.locator('input[name="code"]').fill(code)
    await card.getByTestId('email-bind').click()
    await card.getByTestId('email-current').filter({ hasText: address }).waitFor()
    assert.equal((await apiCall('GET', '/api/user/self')).email, address)
    await shot('48-mobile-email-bound')
  })

  await step(t, 'the user binds a GitHub account from the profile (a local stand-in for GitHub)', async () => {
    await page.goto(`${BASE_URL}/panel/profile`)
    await page.getByTestId('binding-github-bind').click()
    await page.waitForURL((url) => url.href.startsWith(`${GITHUB_URL}/login/oauth/authorize`))
    await page.locator('#authorize').click()
    // Back through /oauth/github: "bound", then on to the panel.
    await page.waitForURL((url) => url.pathname === '/panel')
    const me = await apiCall('GET', '/api/user/self')
    assert.equal(me.username, userName, 'bound to the signed-in account, not a new one')
    assert.ok(me.github_id, 'the GitHub id is bound')
    await page.goto(`${BASE_URL}/panel/profile`)
    await page.getByTestId('binding-github-status').filter({ hasText: me.github_id }).waitFor()
  })

  await step(t, 'a visitor signs up with GitHub on the login page and lands in the panel', async () => {
    assert.ok(GITHUB_URL, 'GITHUB_URL is not set: scripts/e2e.sh starts the fake GitHub')
    const visitor = await newPage({ width: 1280, height: 800 })
    await visitor.goto(`${BASE_URL}/login`)
    await visitor.getByTestId('oauth-github').click()
    await visitor.waitForURL((url) => url.href.startsWith(`${GITHUB_URL}/login/oauth/authorize`))
    const authorize = new URL(visitor.url())
    assert.equal(authorize.searchParams.get('client_id'), 'e2e-client')
    assert.equal(authorize.searchParams.get('scope'), 'user:email')
    const state = authorize.searchParams.get('state')
    await visitor.locator('#authorize').click()
    await visitor.waitForURL((url) => url.pathname === '/panel')
    const self = await (await visitor.request.get(`${BASE_URL}/api/user/self`)).json()
    assert.match(self.data.username, /^octo-e2e-\d+$/)
    assert.equal(self.data.email, `${self.data.username}@users.e2e.test`)
    assert.ok(self.data.github_id)
    // The same callback again (a replayed link) fails, in Chinese, and goes back to /login.
    await visitor.goto(`${BASE_URL}/oauth/github?code=replayed&state=${state}`)
    await visitor.getByTestId('oauth-failed').waitFor()
    await visitor.waitForURL((url) => url.pathname === '/login')
    await visitor.context().close()
  })

  await step(t, 'on a phone, lists are cards and the price page shows a model\'s price', async () => {
    await apiCall('POST', '/api/token', { name: 'phone-key', unlimited_quota: true, expired_at: -1 })
    await page.goto(`${BASE_URL}/panel/token`)
    const card = page.locator('[data-testid^="token-row-"]', { hasText: 'phone-key' })
    await card.waitFor()
    assert.equal(await page.getByTestId('tokens-table').locator('thead').isVisible(), false, 'no table header on a phone')
    const remain = await card.getByTestId('token-remain').boundingBox()
    assert.ok(remain && remain.x >= 0 && remain.x + remain.width <= 390, 'the key\'s balance is on screen')
    const label = await card.getByTestId('token-remain').evaluate((el) => getComputedStyle(el, '::before').content)
    assert.match(label, /剩余额度/, 'each line is labelled with its column')
    await shot('46-mobile-token-cards')
    await page.goto(`${BASE_URL}/price`)
    const price = page.getByTestId('public-price-row-e2e-expensive').getByTestId('public-price-input')
    await price.waitFor()
    const box = await price.boundingBox()
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the price is on screen: ${JSON.stringify(box)}`)
    assert.match((await price.textContent()) ?? '', /\$\d/, 'in dollars')
    await assertNoHorizontalOverflow('the price page on a phone')
    await shot('47-mobile-price')
  })
})
