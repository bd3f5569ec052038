// End-to-end journey against a running Switchboard server (it serves frontend/dist and the API).
//
//   BASE_URL=http://127.0.0.1:3911 ROOT_PASSWORD=... npm run e2e
//
// Uses Debian's Chromium through playwright-core (never downloads a browser); set
// CHROMIUM_PATH to use another binary. Screenshots go to e2e/screenshots/ (git-ignored).
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const BASE_URL = process.env.BASE_URL?.replace(/\/+$/, '')
const ROOT_PASSWORD = process.env.ROOT_PASSWORD
const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url))
const TIMEOUT = 15_000

/** @type {import('playwright-core').Browser | undefined} */
let browser
/** @type {import('playwright-core').Page} */
let page

/**
 * One step of the journey. Steps share the page, so after a failure the later ones are
 * failed at once (the journey has already failed) instead of timing out one by one.
 */
let broken = false
function step(t, name, fn) {
  return t.test(name, async (st) => {
    if (broken) throw new Error('not run: an earlier step of the journey failed')
    try {
      await fn()
    } catch (err) {
      broken = true
      await shot(`failed-${name.replace(/\W+/g, '-')}`).catch(() => {})
      throw err
    }
  })
}

async function shot(name) {
  await page.waitForTimeout(300) // let toast and colour transitions settle
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true })
}

before(async () => {
  // Fail (never skip) without a server to test: a skipped e2e run would look green.
  assert.ok(BASE_URL, 'BASE_URL is not set: start the server and run e.g. BASE_URL=http://127.0.0.1:3911 npm run e2e')
  mkdirSync(SCREENSHOTS, { recursive: true })
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  })
  const context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1280, height: 800 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE_URL })
  context.setDefaultTimeout(TIMEOUT)
  page = await context.newPage()
  page.on('pageerror', (err) => console.error('[page error]', err.message))
})

after(async () => {
  await browser?.close()
})

test('login journey', async (t) => {
  await step(t, 'opens /login and sees the login form', async () => {
    const res = await page.goto(`${BASE_URL}/login`)
    assert.ok(res?.ok(), `GET ${BASE_URL}/login answered ${res?.status()}`)
    await page.getByTestId('login-form').waitFor()
    await page.locator('input[name="username"]').waitFor()
    await page.locator('input[name="password"]').waitFor()
    await shot('01-login')
  })

  await step(t, 'a wrong password shows an error and stays on /login', async () => {
    await page.locator('input[name="username"]').fill('root')
    await page.locator('input[name="password"]').fill(`${ROOT_PASSWORD ?? ''}-wrong-password`)
    await page.locator('form[data-testid="login-form"] button[type="submit"]').click()
    const toast = page.locator('[data-sonner-toast][data-type="error"]').first()
    await toast.waitFor()
    assert.match((await toast.textContent()) ?? '', /\S/, 'the error toast has a message')
    assert.equal(new URL(page.url()).pathname, '/login')
    await shot('02-login-error')
  })

  await step(t, 'signs in as root and lands on /panel', async () => {
    assert.ok(ROOT_PASSWORD, 'ROOT_PASSWORD is not set: it must be the password of the root user')
    await page.locator('input[name="username"]').fill('root')
    await page.locator('input[name="password"]').fill(ROOT_PASSWORD)
    await page.locator('form[data-testid="login-form"] button[type="submit"]').click()
    await page.waitForURL((url) => url.pathname.startsWith('/panel'))
    const username = page.getByTestId('dashboard-username')
    await username.waitFor()
    assert.equal((await username.textContent())?.trim(), 'root')
    await shot('03-panel')
  })

  const tokenName = `e2e-${Date.now()}`
  let createdKey = ''

  await step(t, 'opens the tokens screen from the sidebar', async () => {
    const sidebar = page.getByTestId('sidebar')
    await sidebar.waitFor()
    assert.equal((await page.getByTestId('version-chip').textContent())?.trim(), 'v0.17')
    await page.getByTestId('menu-token').click()
    await page.waitForURL((url) => url.pathname === '/panel/token')
    // Navigation is a transition: wait for the screen itself before reading the shell's state.
    await page.locator('[data-testid="tokens-table"], [data-testid="tokens-empty"]').first().waitFor()
    assert.equal(await page.getByTestId('menu-token').getAttribute('aria-current'), 'page')
    const crumbs = (await page.getByTestId('breadcrumbs').textContent()) ?? ''
    assert.match(crumbs, /^仪表盘/, 'the first crumb is Dashboard')
    await shot('04-tokens')
  })

  await step(t, 'creates a token and sees its full key once', async () => {
    await page.getByTestId('token-create').click()
    const dialog = page.getByTestId('token-form-dialog')
    await dialog.waitFor()
    await dialog.locator('input[name="name"]').fill(tokenName)
    // A new key is usable as it comes: unlimited (the owner's balance bounds it).
    assert.ok(await dialog.locator('input[name="remain_quota"]').isDisabled(), 'a new key starts unlimited')
    await shot('05-token-form')
    await page.getByTestId('token-form-submit').click()
    const keyDialog = page.getByTestId('token-key-dialog')
    await keyDialog.waitFor()
    createdKey = await page.getByTestId('token-full-key').inputValue()
    assert.match(createdKey, /^sk-[A-Za-z0-9]{48}$/, 'the full key is shown after creation')
    await shot('06-token-created')
    await keyDialog.getByRole('button', { name: '关闭' }).first().click()
    await keyDialog.waitFor({ state: 'detached' })
  })

  await step(t, 'sees the new token in the list, masked, and copies its key', async () => {
    const row = page.locator('[data-testid^="token-row-"]', { hasText: tokenName })
    await row.waitFor()
    assert.match((await row.getByTestId('token-status').textContent()) ?? '', /已启用/)
    assert.ok(!((await row.textContent()) ?? '').includes(createdKey), 'the list shows the key masked')
    await row.getByTestId('token-copy').click()
    // Copied (success toast), or the browser refused and the key is shown to copy by hand.
    const copied = page.locator('[data-sonner-toast][data-type="success"]', { hasText: '复制成功' })
    const manual = page.getByTestId('token-key-dialog')
    await copied.or(manual).first().waitFor()
    if (await manual.isVisible()) {
      assert.equal(await page.getByTestId('token-full-key').inputValue(), createdKey)
      await page.keyboard.press('Escape')
    } else {
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), createdKey)
    }
    await shot('07-tokens-list')
  })

  await step(t, 'opens the logs screen from the sidebar', async () => {
    await page.getByTestId('menu-log').click()
    await page.waitForURL((url) => url.pathname === '/panel/log')
    await page.getByTestId('log-filters').waitFor()
    await page.locator('[data-testid="logs-table"], [data-testid="logs-empty"]').first().waitFor()
    assert.equal(await page.getByTestId('menu-log').getAttribute('aria-current'), 'page')
    await shot('08-logs')
  })

  await step(t, 'returns to the dashboard through the first breadcrumb', async () => {
    await page.getByTestId('breadcrumbs').getByRole('link', { name: '仪表盘' }).click()
    await page.waitForURL((url) => url.pathname === '/panel/dashboard')
    await page.getByTestId('dashboard-username').waitFor()
  })

  await step(t, 'switches the language to English', async () => {
    await page.getByTestId('language-switcher').click()
    await page.getByRole('menuitemradio', { name: 'English' }).click()
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor()
    await page.getByTestId('menu-token').getByText('Tokens').waitFor()
    assert.equal(await page.locator('html').getAttribute('lang'), 'en')
    await shot('09-panel-en')
  })

  await step(t, 'toggles the dark theme', async () => {
    const isDark = () => page.evaluate(() => document.documentElement.classList.contains('dark'))
    if (await isDark()) await page.getByTestId('theme-toggle').click() // start from light
    await page.getByTestId('theme-toggle').click()
    await page.waitForFunction(() => document.documentElement.classList.contains('dark'))
    assert.equal(await page.evaluate(() => localStorage.getItem('theme')), 'dark')
    await shot('10-panel-dark')
  })

  await step(t, 'signs out and lands on /', async () => {
    await page.getByTestId('profile-avatar').click()
    await page.getByTestId('profile-drawer').waitFor()
    await page.getByTestId('sign-out').click()
    await page.waitForURL((url) => url.pathname === '/')
    await page.getByTestId('home-title').waitFor()
    assert.equal(await page.evaluate(() => localStorage.getItem('user')), null)
    await shot('11-signed-out')
  })
})
