/**
 * The explorer in a real browser, as a person uses it: Debian's Chromium driven by playwright-core,
 * against the registry serving the demo data (and a hostile title, and a merge) with the page on.
 * Skipped with the reason where no Chromium is installed, unless ER_REQUIRE_BROWSER=1 (CI) makes
 * that a failure.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createWordVectorEmbedder } from '../../src/embedders/index.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import { serve, type RunningServer } from '../../src/node/index.js'
import { createRegistry } from '../../src/registry.js'
import { createIndexer } from '../../src/search/indexer.js'
import { createSearch } from '../../src/search/search-service.js'
import { importNdjson } from '../../src/warehouse/import.js'
import { API_KEY, importDemo } from '../support/demo.js'

const CHROMIUM = process.env.ER_CHROMIUM ?? '/usr/bin/chromium'
const missing = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium)`
if (missing && process.env.ER_REQUIRE_BROWSER === '1') throw new Error(`ER_REQUIRE_BROWSER=1 but ${missing}`)

const HOSTILE_NAME = '<img src=x onerror=alert(1)>'
const HOSTILE_TITLE = '<script>alert(2)</script>"><b>bold</b>'
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

describe.skipIf(missing !== null)(`the explorer in Chromium${missing ? ` skipped: ${missing}` : ''}`, () => {
  let api: RunningServer
  let browser: Browser
  let store: ReturnType<typeof createMemoryStore>
  /** What every page said on its console or threw, and every dialog a script opened: the tests expect none. */
  const troubles: string[] = []

  /** An authenticated GET of the API, for what the page should show. */
  const apiGet = async (path: string) => {
    const response = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${API_KEY}` } })
    expect(response.status).toBe(200)
    return (await response.json()) as { data: { id: string; type: string }[]; links: { next?: string }; meta: Record<string, unknown> }
  }
  /** Every entity of a filter, following links.next: what the facet counts must equal. */
  const listIds = async (filter: string) => {
    const ids: string[] = []
    for (let path: string | null = `/v1/entities?filter=${encodeURIComponent(filter)}`; path !== null; ) {
      const page = await apiGet(path)
      ids.push(...page.data.map((entity) => entity.id))
      path = page.links.next === undefined ? null : new URL(page.links.next).pathname + new URL(page.links.next).search
    }
    return ids
  }

  async function open(path: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await browser.newContext({ viewport, acceptDownloads: true })
    context.setDefaultTimeout(10_000)
    const page = await context.newPage()
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') troubles.push(`console ${message.type()}: ${message.text()}`)
    })
    page.on('pageerror', (error) => troubles.push(`page error: ${error.message}`))
    page.on('dialog', (dialog) => {
      troubles.push(`dialog: ${dialog.message()}`)
      void dialog.dismiss()
    })
    await page.goto(`${api.url}${path}`)
    return page
  }

  /** Until the page shows it: a loaded machine may take seconds. */
  const eventually = <T,>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 })
  const filterBox = (page: Page) => page.getByRole('textbox', { name: 'Filter', exact: true })
  /** Rows of the table the page shows under this label. */
  const rowIds = (page: Page, table: string) => page.getByRole('region', { name: table }).locator('tbody tr td:first-child').allTextContents()

  async function expectAccessible(page: Page) {
    await page.evaluate(AXE_SOURCE)
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe
      const { violations } = await axe.run()
      return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)
    })
    expect(violations).toEqual([])
  }

  beforeAll(async () => {
    store = createMemoryStore()
    const blobs = await importDemo(store.warehouse, createMemoryBlobStore())
    const extra = [
      JSON.stringify({ id: 'hostile1', type: 'person', name: HOSTILE_NAME, title: HOSTILE_TITLE, jurisdiction: 'US-WA', status: 'serving' }),
      JSON.stringify({ op: 'merge', id: 's1111', into: 's1113' }),
    ]
    const report = await importNdjson(extra, { warehouse: store.warehouse, blobs, baseDir: fileURLToPath(new URL('../../demo/', import.meta.url)) })
    expect(report.errors).toEqual([])
    const index = createMemorySearchIndex()
    const embedder = createWordVectorEmbedder()
    const indexer = createIndexer({ store, index, embedder })
    await indexer.catchUp()
    const search = createSearch(store, { index, embedder, lag: () => indexer.lag() })
    api = await serve(createRegistry({ store, blobs, search, auth: createApiKeyAuthenticator({ keys: [API_KEY] }), explorer: true }), { port: 0 })
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  })
  beforeEach(() => {
    troubles.length = 0
  })
  afterAll(async () => {
    await browser?.close()
    await api?.close()
  })

  it('asks for a key, lists, filters type:person, pages, and narrows by a facet whose counts equal the list pages', async () => {
    const page = await open('/')
    await page.getByLabel('API key').fill(API_KEY)
    await page.getByRole('button', { name: 'Use this key' }).click()
    await eventually(() => rowIds(page, 'Entities')).toHaveLength(25)
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1)

    await filterBox(page).fill('type:person')
    await filterBox(page).press('Enter')
    await eventually(() => new URL(page.url()).searchParams.get('filter')).toBe('type:person')
    const persons = await listIds('type:person')
    await eventually(() => page.locator('.facets .total').textContent()).toBe(`${persons.length} entities match`)
    const firstPage = await rowIds(page, 'Entities')
    expect(firstPage).toEqual(persons.slice(0, 25))
    expect(await page.getByRole('region', { name: 'Type', exact: true }).getByRole('button').allTextContents()).toEqual([`person ${persons.length}`])

    await page.getByRole('button', { name: 'Next page' }).click()
    await eventually(() => rowIds(page, 'Entities')).toEqual(persons.slice(25, 50))
    expect(new URL(page.url()).searchParams.get('after')).toBe(persons[24])

    const washington = await listIds('type:person jurisdiction:US-WA')
    await page.getByRole('region', { name: 'Jurisdiction' }).getByRole('button', { name: /^Show all \d+$/ }).click()
    await page.getByRole('button', { name: `US-WA ${washington.length}` }).click()
    await eventually(() => filterBox(page).inputValue()).toBe('type:person jurisdiction:US-WA')
    await eventually(() => rowIds(page, 'Entities')).toEqual(washington)
    await eventually(() => page.locator('.facets .total').textContent()).toBe(`${washington.length} entities match`)
    await expectAccessible(page)
    expect(troubles).toEqual([])
  })

  it("shows a bad filter's detail beside the box", async () => {
    const page = await open(`/explore#key=${API_KEY}`)
    await filterBox(page).fill('party:x')
    await page.getByRole('button', { name: 'Apply' }).click()
    const detail = page.locator('#filter-box-error')
    await eventually(() => detail.textContent()).toMatch(/^filter: term "party:x" at position 0 names the unsupported field "party"/)
    expect(await filterBox(page).getAttribute('aria-invalid')).toBe('true')
    expect(await filterBox(page).getAttribute('aria-describedby')).toContain('filter-box-error')
    await expectAccessible(page)
    // The browser itself reports each 400 answer on the console (the list's and the facets'): nothing else.
    expect(troubles).toEqual([
      expect.stringMatching(/status of 400/),
      expect.stringMatching(/status of 400/),
    ])
  })

  it('takes the key from the fragment and removes it from the address bar; shows a hostile name as text and runs nothing', async () => {
    const page = await open(`/explore?filter=${encodeURIComponent('name:~onerror')}#key=${API_KEY}`)
    expect(page.url()).toBe(`${api.url}/explore?filter=name%3A~onerror`)
    await eventually(() => rowIds(page, 'Entities')).toEqual(['hostile1'])
    await page.getByRole('link', { name: 'hostile1' }).click()
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(HOSTILE_NAME)
    expect(await page.locator('.attributes dd').allTextContents()).toContain(HOSTILE_TITLE)
    expect(await page.locator('main img, main script, main b').count()).toBe(0)
    expect(await page.evaluate(() => document.querySelectorAll('img').length)).toBe(0)
    expect(troubles).toEqual([])
  })

  it('searches, opens an entity, shows its renditions and recent changes, downloads a rendition', async () => {
    const page = await open(`/explore#key=${API_KEY}`)
    await page.getByRole('link', { name: 'Search' }).click()
    await page.getByRole('textbox', { name: 'Search', exact: true }).fill('health care type:legislation')
    await page.getByRole('textbox', { name: 'Search', exact: true }).press('Enter')
    const hits = await apiGet(`/v1/search?q=${encodeURIComponent('health care type:legislation')}`)
    await eventually(() => page.getByRole('region', { name: 'Search results' }).locator('tbody tr td:nth-child(2)').allTextContents()).toEqual(hits.data.map((hit) => hit.id))
    expect(hits.data.map((hit) => hit.id)).toContain('hr3590111')
    await expectAccessible(page)

    await page.getByRole('link', { name: 'hr3590111' }).click()
    await eventually(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Patient Protection and Affordable Care Act')
    const renditions = page.getByRole('region', { name: 'Renditions of text 1' })
    const content = await fetch(`${api.url}/v1/entities/hr3590111`, { headers: { Authorization: `Bearer ${API_KEY}` } }).then((r) => r.json())
    const bytes = await fetch(content.data.attributes.texts[0].renditions[0].links.content, { headers: { Authorization: `Bearer ${API_KEY}` } }).then((r) => r.arrayBuffer())
    await eventually(() => renditions.locator('tbody td:nth-child(3)').textContent()).toBe(`${(bytes.byteLength / 1024).toFixed(1)} KiB`)
    expect(await renditions.locator('tbody td:nth-child(2)').textContent()).toBe('text/html')
    await eventually(() => page.getByRole('region', { name: 'Recent changes of this entity' }).locator('tbody tr').count()).toBe(1)
    await expectAccessible(page)

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download hr3590-111-information.html' }).click()])
    expect(download.suggestedFilename()).toBe('hr3590-111-information.html')
    expect(readFileSync((await download.path())!).byteLength).toBe(bytes.byteLength)
    expect(troubles).toEqual([])
  })

  it('tells that a merge was followed', async () => {
    const page = await open(`/explore?view=entity&id=s1111#key=${API_KEY}`)
    await eventually(() => page.locator('.notice').textContent()).toMatch(/^s1111 was merged into s1113: the API followed the merge and answered with Content-Location: http:.*\/v1\/entities\/s1113\.$/)
    expect(troubles).toEqual([])
  })

  it('exports the current filter as CSV and NDJSON, page by page', async () => {
    const page = await open(`/explore?filter=${encodeURIComponent('type:legislation')}#key=${API_KEY}`)
    const bills = await listIds('type:legislation')
    await eventually(() => rowIds(page, 'Entities')).toEqual(bills)
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()])
    const lines = readFileSync((await csv.path())!, 'utf8').split('\r\n')
    expect(lines[0]).toBe('id,type,title,name,displayDate,jurisdiction,localIdentifier,localType,authority,status')
    expect(lines.slice(1, -1).map((line) => line.split(',')[0])).toEqual(bills)
    const [ndjson] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export NDJSON' }).click()])
    const records = readFileSync((await ndjson.path())!, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { id: string })
    expect(records.map((record) => record.id)).toEqual(bills)
    expect(await page.getByText('Export done.').count()).toBe(1)
    expect(troubles).toEqual([])
  })

  it('shows the change feed for a filter, with the request behind it to copy', async () => {
    const page = await open(`/explore?view=changes&filter=${encodeURIComponent('type:legislation')}#key=${API_KEY}`)
    const feed = await apiGet(`/v1/entities/changes?filter=${encodeURIComponent('type:legislation')}&page%5Blimit%5D=25`)
    await eventually(() => page.getByRole('region', { name: 'Changes' }).locator('tbody tr').count()).toBe(feed.data.length)
    const address = `${api.url}/v1/entities/changes?filter=type%3Alegislation&page%5Blimit%5D=25`
    expect(await page.locator('.api-request code').textContent()).toBe(`GET ${address}`)
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'])
    await page.getByRole('button', { name: 'Copy as curl' }).click()
    await eventually(() => page.evaluate(() => navigator.clipboard.readText())).toBe(`curl -H "Authorization: Bearer $KEY" '${address}'`)
    await expectAccessible(page)
    expect(troubles).toEqual([])
  })

  it('adds the changes made while it shows the head of the feed, as they are made', async () => {
    const page = await open(`/explore?view=changes&filter=${encodeURIComponent('type:legislation')}#key=${API_KEY}`)
    await eventually(() => page.getByText('Following the feed').count()).toBe(1)
    await store.warehouse.upsert({ id: 'livebill1', type: 'legislation', name: 'A bill made while watching' })
    // A change that does not match the filter shows nowhere.
    await store.warehouse.upsert({ id: 'liveperson1', type: 'person', name: 'Not a bill' })
    await eventually(() => page.getByRole('region', { name: 'New changes' }).locator('tbody tr td:nth-child(3)').allTextContents()).toEqual(['livebill1'])
    await expectAccessible(page)
    expect(troubles).toEqual([])
  })

  it('is readable at a phone width and usable by keyboard alone', async () => {
    const page = await open(`/explore#key=${API_KEY}`, { width: 390, height: 844 })
    await eventually(() => rowIds(page, 'Entities')).toHaveLength(25)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    // From the top: skip link, then the views; Tab reaches the filter box, typing and Enter apply it.
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the content')
    for (let presses = 0; presses < 20 && (await page.evaluate(() => document.activeElement?.id)) !== 'filter-box'; presses++) await page.keyboard.press('Tab')
    await page.keyboard.type('type:committee')
    await page.keyboard.press('Enter')
    await eventually(() => page.locator('.facets .total').textContent()).toBe(`${(await listIds('type:committee')).length} entities match`)
    await expectAccessible(page)
    expect(troubles).toEqual([])
  })
})
