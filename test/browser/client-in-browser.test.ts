/**
 * The client in a real browser: a page from another origin lists, gets and downloads with a bearer
 * key and reads the exposed headers, so CORS is checked as a browser enforces it. Debian's Chromium
 * driven by playwright-core; skipped with the reason where no Chromium is installed, unless
 * ER_REQUIRE_BROWSER=1 (CI) makes that a failure.
 */
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import { serve, type RunningServer } from '../../src/node/index.js'
import { createRegistry } from '../../src/registry.js'
import { API_KEY, importDemo } from '../support/demo.js'

const CHROMIUM = process.env.ER_CHROMIUM ?? '/usr/bin/chromium'
const missing = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium)`
if (missing && process.env.ER_REQUIRE_BROWSER === '1') throw new Error(`ER_REQUIRE_BROWSER=1 but ${missing}`)

/** What the page does, in the browser, with the bundled client. */
const PAGE_SCRIPT = `
import { createClient } from '/client.js'
const params = new URLSearchParams(location.search)
const client = createClient({ baseUrl: params.get('api'), apiKey: params.get('key') })
try {
  const bills = []
  let feedHead = null
  for await (const page of client.listPages({ filter: 'type:legislation', limit: 7 })) {
    feedHead ??= page.feedHead
    bills.push(...page.data.map((entity) => entity.id))
  }
  const bill = await client.get('hr3590111')
  const content = bill.attributes.texts[0].renditions[0].links.content
  const download = await client.download(content, { range: { start: 0, end: 14 } })
  const text = await new Response(download.body).text()
  let unauthorized = null
  try { await createClient({ baseUrl: params.get('api'), apiKey: 'wrong' }).get('hr3590111') } catch (error) { unauthorized = [error.status, error.code] }
  window.result = {
    origin: location.origin, bills, feedHead, title: bill.attributes.title, status: download.status, text,
    etag: download.headers.get('ETag'), disposition: download.headers.get('Content-Disposition'),
    contentRange: download.headers.get('Content-Range'), unauthorized,
  }
} catch (error) {
  window.result = { error: String(error) }
}
`

describe.skipIf(missing !== null)(`the client in Chromium${missing ? ` skipped: ${missing}` : ''}`, () => {
  let api: RunningServer
  let page: Server
  let pageOrigin: string
  beforeAll(async () => {
    const store = createMemoryStore()
    const blobs = await importDemo(store.warehouse, createMemoryBlobStore())
    api = await serve(createRegistry({ store, blobs, auth: createApiKeyAuthenticator({ keys: [API_KEY] }) }), { port: 0 })
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('../../src/client/index.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
    })
    const files: Record<string, [string, string]> = {
      '/client.js': ['text/javascript', bundle.outputFiles[0]!.text],
      '/page.js': ['text/javascript', PAGE_SCRIPT],
      '/': ['text/html', '<!doctype html><title>another origin</title><script type="module" src="/page.js"></script>'],
    }
    page = createServer((request, response) => {
      const [type, body] = files[new URL(request.url!, 'http://x').pathname] ?? ['text/plain', 'not found']
      response.writeHead(type === 'text/plain' ? 404 : 200, { 'Content-Type': type }).end(body)
    })
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve))
    // localhost, not 127.0.0.1: another host name, so another origin than the API's.
    pageOrigin = `http://localhost:${(page.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await api?.close()
    page?.closeAllConnections()
    await new Promise((resolve) => page?.close(resolve))
  })

  it('lists, gets and downloads across origins and reads the exposed headers', async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    try {
      const tab = await browser.newPage()
      await tab.goto(`${pageOrigin}/?api=${encodeURIComponent(api.url)}&key=${API_KEY}`)
      await tab.waitForFunction(() => (window as unknown as { result?: unknown }).result !== undefined, null, { timeout: 20_000 })
      const result = await tab.evaluate(() => (window as unknown as { result: Record<string, unknown> }).result)
      expect(result.error).toBeUndefined()
      expect(result.origin).not.toBe(new URL(api.url).origin)
      expect(result.bills).toHaveLength(19)
      expect(result.feedHead).toMatch(/^echg_/)
      expect(result.title).toBeTruthy()
      expect(result.status).toBe(206)
      expect(result.text).toHaveLength(15)
      expect(result.etag).toMatch(/^".+"$/)
      expect(result.disposition).toMatch(/^inline; filename=/)
      expect(result.contentRange).toMatch(/^bytes 0-14\/\d+$/)
      expect(result.unauthorized).toEqual([401, 'unauthorized'])
    } finally {
      await browser.close()
    }
  })
})
