import { describe, expect, it } from 'vitest'
import { createRouteHandlers } from '../../adapters/next.js'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createMemoryStore } from '../../src/memory/index.js'
import { createRegistry, type RegistryOptions } from '../../src/registry.js'
import { API_KEY, BASE } from '../support/demo.js'
import { expectError } from '../support/documents.js'

const STRICT_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** A registry with no key sent (the page is public) unless `key` is given. */
function registry(options: Partial<RegistryOptions> = {}) {
  const { fetch } = createRegistry({ store: createMemoryStore(), auth: createApiKeyAuthenticator({ keys: [API_KEY] }), ...options })
  return (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(new Request(`${BASE}${path}`, { ...init, headers: init.key ? { Authorization: `Bearer ${init.key}` } : {} }))
}

/** The page's script and stylesheet addresses, as its HTML names them. */
function filesOf(html: string): { script: string; stylesheet: string } {
  return {
    script: /<script type="module" src="([^"]+)"><\/script>/.exec(html)![1]!,
    stylesheet: /<link rel="stylesheet" href="([^"]+)">/.exec(html)![1]!,
  }
}

describe('the explorer route', () => {
  it("is off by default: / and /explore are the API's, which asks for a key and knows no such endpoint", async () => {
    const get = registry()
    for (const path of ['/', '/explore']) {
      await expectError(await get(path), 401, 'unauthorized')
      await expectError(await get(path, { key: API_KEY }), 404, 'not_found')
    }
  })

  it.each(['/', '/explore', '/explore?filter=type:person'])('serves the page at %s with no key, under a strict Content-Security-Policy', async (path) => {
    const response = await registry({ explorer: true })(path)
    expect(response.status).toBe(200)
    expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('Content-Security-Policy')).toBe(STRICT_POLICY)
    expect(response.headers.get('X-Content-Type-Options')).toBe('nosniff')
    expect(response.headers.get('Referrer-Policy')).toBe('no-referrer')
    expect(response.headers.get('Cache-Control')).toBe('no-cache')
    const html = await response.text()
    expect(html).toContain('<meta name="entity-registry-base-path" content="">')
    // Nothing inline: the policy would refuse it.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=/i)
  })

  it('serves the script and stylesheet the page names, for good (named by their hash), under the same headers', async () => {
    const get = registry({ explorer: true })
    const { script, stylesheet } = filesOf(await (await get('/explore')).text())
    expect(script).toMatch(/^\/explore\/explorer-[0-9a-f]{12}\.js$/)
    expect(stylesheet).toMatch(/^\/explore\/explorer-[0-9a-f]{12}\.css$/)
    for (const [path, type] of [
      [script, 'text/javascript; charset=utf-8'],
      [stylesheet, 'text/css; charset=utf-8'],
    ] as const) {
      const response = await get(path)
      expect(response.status).toBe(200)
      expect(response.headers.get('Content-Type')).toBe(type)
      expect(response.headers.get('Cache-Control')).toBe('public, max-age=31536000, immutable')
      expect(response.headers.get('Content-Security-Policy')).toBe(STRICT_POLICY)
      expect(response.headers.get('X-Content-Type-Options')).toBe('nosniff')
      expect((await response.text()).length).toBeGreaterThan(1000)
      const head = await get(path, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.headers.get('Content-Length')).toBe(response.headers.get('Content-Length'))
      expect(await head.text()).toBe('')
    }
    // Any other file under /explore/ is the API's: unknown path.
    await expectError(await get('/explore/explorer-000000000000.js', { key: API_KEY }), 404, 'not_found')
  })

  it('leaves the API as it was: its endpoints still ask for a key', async () => {
    const get = registry({ explorer: true })
    await expectError(await get('/v1/entities'), 401, 'unauthorized')
    expect((await get('/v1/entities', { key: API_KEY })).status).toBe(200)
  })

  it.each([
    ['a path', '/api/registry'],
    ['an absolute URL', 'https://public.example/api/registry'],
  ])('is served under the base path when baseUrl is %s, and tells the page where the API is', async (_, baseUrl) => {
    const get = registry({ explorer: true, baseUrl })
    for (const path of ['/api/registry', '/api/registry/', '/api/registry/explore']) expect((await get(path)).status, path).toBe(200)
    const html = await (await get('/api/registry/explore')).text()
    expect(html).toContain('<meta name="entity-registry-base-path" content="/api/registry">')
    const { script, stylesheet } = filesOf(html)
    expect(script).toMatch(/^\/api\/registry\/explore\/explorer-[0-9a-f]{12}\.js$/)
    expect((await get(script)).status).toBe(200)
    expect((await get(stylesheet)).status).toBe(200)
    // Outside the base path nothing is served.
    await expectError(await get('/explore'), 401, 'unauthorized')
  })

  it('is served by a Next.js catch-all route handler as by any adapter', async () => {
    const { GET } = createRouteHandlers(() =>
      createRegistry({ store: createMemoryStore(), auth: createApiKeyAuthenticator({ keys: [API_KEY] }), baseUrl: '/api/registry', explorer: true }),
    )
    const page = await GET(new Request('http://localhost:3000/api/registry/explore', { headers: { Host: 'app.example' } }))
    expect([page.status, page.headers.get('Content-Security-Policy')]).toEqual([200, STRICT_POLICY])
    const { script } = filesOf(await page.text())
    const bundle = await GET(new Request(`http://localhost:3000${script}`, { headers: { Host: 'app.example' } }))
    expect([bundle.status, bundle.headers.get('Content-Type')]).toEqual([200, 'text/javascript; charset=utf-8'])
  })
})
