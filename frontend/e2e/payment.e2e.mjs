// The online top-up journey against a running Switchboard (scripts/e2e.sh starts it with an
// epay gateway stand-in at EPAY_URL, scripts/fake-epay.py, which checks the pay URL's signature
// as epay does and signs its notification with the merchant key):
//   root adds the gateway on the payment screen; a user sees the fee and the total before
//   paying, pays on the gateway's cashier page in the tab the console opened, and the console
//   (polling) shows the payment and the new balance; the gateway's notification was
//   acknowledged once, and the order log shows the order paid.
//
//   BASE_URL=... ROOT_PASSWORD=... EPAY_URL=... EPAY_PID=... EPAY_KEY=... npm run e2e
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const BASE_URL = process.env.BASE_URL?.replace(/\/+$/, '')
const ROOT_PASSWORD = process.env.ROOT_PASSWORD
const EPAY_URL = process.env.EPAY_URL?.replace(/\/+$/, '')
const EPAY_PID = process.env.EPAY_PID
const EPAY_KEY = process.env.EPAY_KEY
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
      await shot(`failed-payment-${name.replace(/\W+/g, '-')}`).catch(() => {})
      throw err
    }
  })
}

async function shot(name) {
  await page.waitForTimeout(300)
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true })
}

async function newPage() {
  const context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1280, height: 800 } })
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

async function apiCall(method, path, data) {
  const res = await page.request.fetch(`${BASE_URL}${path}`, { method, data })
  const body = await res.json()
  assert.ok(body.success, `${method} ${path}: ${JSON.stringify(body)}`)
  return body.data
}

before(async () => {
  assert.ok(BASE_URL, 'BASE_URL is not set')
  assert.ok(ROOT_PASSWORD, 'ROOT_PASSWORD is not set')
  assert.ok(EPAY_URL && EPAY_PID && EPAY_KEY, 'EPAY_URL/EPAY_PID/EPAY_KEY are not set: scripts/e2e.sh starts the fake epay')
  mkdirSync(SCREENSHOTS, { recursive: true })
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  })
  page = await newPage()
})

after(async () => {
  await browser?.close()
})

test('online top-up through epay', async (t) => {
  const gatewayName = `易支付-${Date.now() % 100000}`
  const userName = `payer${Date.now() % 1_000_000}`
  const password = 'e2e-payer-password'
  let userId = 0

  await step(t, 'root adds the epay gateway on the payment screen', async () => {
    await signIn('root', ROOT_PASSWORD)
    await apiCall('PUT', '/api/option', { key: 'PaymentUSDRate', value: 7.3 })
    await page.goto(`${BASE_URL}/panel/payment`)
    await page.getByTestId('gateway-create').click()
    const form = page.getByTestId('gateway-form')
    await form.locator('input[name="name"]').fill(gatewayName)
    await form.locator('input[name="icon"]').fill('alipay')
    await form.locator('select[name="currency"]').selectOption('CNY')
    await form.locator('input[name="percent_fee"]').fill('0.05')
    await form.locator('input[name="url"]').fill(EPAY_URL)
    await form.locator('input[name="pid"]').fill(EPAY_PID)
    await form.locator('input[name="key"]').fill(EPAY_KEY)
    await page.getByTestId('gateway-form-submit').click()
    await page.getByTestId('gateways-table').getByText(gatewayName).waitFor()
    await shot('60-payment-gateways')
    const created = await apiCall('POST', '/api/user', { username: userName, password })
    userId = created.id
  })

  await step(t, 'the user sees the fee and the total before paying', async () => {
    page = await newPage()
    await signIn(userName, password)
    await page.goto(`${BASE_URL}/panel/topup`)
    const card = page.getByTestId('topup-online-card')
    await card.waitFor()
    await card.getByText(gatewayName).click()
    await card.locator('input[name="amount"]').fill('10')
    // (10 + 10 × 0.05) × 7.3 = 76.65 CNY; the fee 0.5 × 7.3 = 3.65.
    await page.getByTestId('topup-quote-total').getByText('76.65').waitFor()
    assert.match((await page.getByTestId('topup-quote-fee').textContent()) ?? '', /3\.65/)
    await shot('61-topup-quote')
  })

  await step(t, 'the user pays on the gateway\'s page and the console shows the new balance', async () => {
    const before = await apiCall('GET', '/api/user/self')
    const cashierOpened = page.context().waitForEvent('page')
    await page.getByTestId('topup-pay').click()
    const cashier = await cashierOpened
    await cashier.waitForLoadState()
    assert.equal(await cashier.locator('#amount').textContent(), '¥76.65', 'the gateway checked the signature and shows the amount')
    await page.getByTestId('topup-waiting').waitFor()
    await cashier.locator('#pay').click()
    // The gateway sends the payer back to the console, which shows the order settled.
    await cashier.waitForURL((url) => url.pathname === '/panel/topup')
    await cashier.close()
    await page.locator('[data-testid="topup-order-result"][data-outcome="paid"]').waitFor()
    await shot('62-topup-paid')
    const me = await apiCall('GET', '/api/user/self')
    assert.equal(me.quota, before.quota + 5_000_000, 'credited $10 (the fee is paid, not deducted)')
    const text = await page.evaluate(() => document.body.innerText)
    const sentence = text.match(/\b[A-Za-z]{2,}(?: [A-Za-z]{2,}){3,}/)
    assert.equal(sentence, null, `English on the Chinese page: ${sentence?.[0]}`)
  })

  await step(t, 'the gateway\'s notification was acknowledged once and the order log shows it paid', async () => {
    const res = await page.request.fetch(`${EPAY_URL}/notifications`)
    const answers = await res.json()
    assert.equal(answers.length, 1, JSON.stringify(answers))
    assert.deepEqual([answers[0].status, answers[0].body], [200, 'success'])
    page = await newPage()
    await signIn('root', ROOT_PASSWORD)
    const orders = await apiCall('GET', `/api/payment/order?user_id=${userId}`)
    assert.equal(orders.total_count, 1)
    assert.equal(orders.data[0].status, 'paid')
    assert.equal(orders.data[0].order_amount, '76.65')
    await page.goto(`${BASE_URL}/panel/payment`)
    await page.getByRole('tab').nth(1).click()
    await page.getByText(answers[0].order).first().waitFor()
    await shot('63-payment-orders')
  })
})
