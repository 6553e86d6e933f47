import { beforeAll, describe, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createMemoryStore } from '../../src/memory/index.js'
import type { EntityStore } from '../../src/ports/entity-store.js'
import { createTokenBucketRateLimiter } from '../../src/rate-limit/token-bucket.js'
import { createRegistry } from '../../src/registry.js'
import { API_KEY, BASE, importDemo, testRegistry } from '../support/demo.js'
import { expectError } from '../support/documents.js'

describe('errors', () => {
  const store = createMemoryStore()
  const { registry, get } = testRegistry(store)
  beforeAll(() => importDemo(store.warehouse))

  it.each([
    ['/v1/entities?filter=party:Democrat', 'unsupported_field', 'filter'],
    ['/v1/entities?filter=attributes.title:x', 'nested_field_path', 'filter'],
    ['/v1/entities?filter=texts[0].mime:x', 'nested_field_path', 'filter'],
    ['/v1/entities?filter=health', 'free_text_not_allowed', 'filter'],
    ['/v1/entities?filter=type:"unclosed', 'invalid_filter', 'filter'],
    ['/v1/entities?filter=type:', 'invalid_filter', 'filter'],
    ['/v1/entities?filter=type:a&filter=type:b', 'invalid_filter', 'filter'],
    ['/v1/entities?page[limit]=0', 'invalid_pagination', 'page[limit]'],
    ['/v1/entities?page[limit]=101', 'invalid_pagination', 'page[limit]'],
    ['/v1/entities?page[limit]=1e2', 'invalid_pagination', 'page[limit]'],
    ['/v1/entities?page[after]=NOT-AN-ID', 'invalid_pagination', 'page[after]'],
    ['/v1/entities?page[offset]=3', 'invalid_pagination', 'page[offset]'],
    ['/v1/entities?sort=title', 'unknown_parameter', 'sort'],
    ['/v1/entities/changes', 'invalid_filter', 'filter'],
    ['/v1/entities/changes?filter=', 'invalid_filter', 'filter'],
    ['/v1/entities/changes?filter=type:person&page[after]=h000001', 'invalid_pagination', 'page[after]'],
    ['/v1/entities/changes?filter=-budget', 'free_text_not_allowed', 'filter'],
  ])('GET %s is 400 %s naming %s', async (path, code, parameter) => {
    await expectError(await get(path), 400, code, parameter)
  })

  it('names the offending term and its position', async () => {
    const error = await expectError(await get(`/v1/entities?filter=${encodeURIComponent('type:person party:Whig')}`), 400, 'unsupported_field', 'filter')
    expect(error.detail).toContain('"party:Whig"')
    expect(error.detail).toContain('position 12')
  })

  it('ignores parameters that JSON:API leaves to the client (not only a-z)', async () => {
    expect((await get('/v1/entities?page[limit]=1&_cacheBust=1')).status).toBe(200)
  })

  it('rejects bad ids with 400 and unknown ones with 404', async () => {
    await expectError(await get('/v1/entities/Not_An_Id'), 400, 'invalid_id', 'id')
    await expectError(await get('/v1/entities/zzzz9999'), 404, 'not_found')
    await expectError(await get('/v2/entities'), 404, 'not_found')
  })

  it('requires a valid bearer key before anything else, and never echoes it', async () => {
    for (const authorization of [undefined, 'Bearer wrong-key', `Basic ${API_KEY}`, 'Bearer']) {
      const response = await registry.fetch(
        new Request(`${BASE}/v1/entities/nope!`, { headers: authorization ? { Authorization: authorization } : {} }),
      )
      expect(response.headers.get('www-authenticate')).toBe('Bearer')
      const body = await response.clone().text()
      expect(body).not.toContain('wrong-key')
      await expectError(response, 401, 'unauthorized')
    }
  })

  it('answers CORS preflight without credentials', async () => {
    const response = await registry.fetch(
      new Request(`${BASE}/v1/entities`, { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' } }),
    )
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-allow-headers')).toContain('Authorization')
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS')
  })

  it('exposes the service headers to browsers', async () => {
    const response = await get('/v1/entities?page[limit]=1')
    for (const header of ['Link', 'Change-Feed-Head', 'Search-Index-Lag', 'Retry-After', 'RateLimit', 'Content-Location', 'ETag']) {
      expect(response.headers.get('access-control-expose-headers')).toContain(header)
    }
  })

  it('allows only GET and HEAD: 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const response = await get('/v1/entities', { method })
      expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
      await expectError(response, 405, 'method_not_allowed')
    }
  })

  it('routes by path alone: trailing slashes allowed, one segment an id, anything else 404; under a base path too', async () => {
    const [first] = (await (await get('/v1/entities?page[limit]=1')).json()).data
    expect((await get(`/v1/entities/${first.id}/`)).status).toBe(200)
    expect((await get('/v1/entities/')).status).toBe(200)
    expect((await get('/v1/entities/changes/?filter=type:person')).status).toBe(200)
    await expectError(await get(`/v1/entities/${first.id}/other`), 404, 'not_found')
    await expectError(await get('/v1/nothing'), 404, 'not_found')
    await expectError(await get('/v1/nothing', { method: 'POST' }), 404, 'not_found')
    const based = testRegistry(store, { baseUrl: '/api.v1+x' })
    expect((await based.get(`/api.v1+x/v1/entities/${first.id}`)).status).toBe(200)
    await expectError(await based.get(`/apixv1+x/v1/entities/${first.id}`), 404, 'not_found')
    await expectError(await based.get(`/v1/entities/${first.id}`), 404, 'not_found')
  })

  it('negotiates the JSON:API media type: 406 and 415', async () => {
    await expectError(await get('/v1/entities', { headers: { Accept: 'application/vnd.api+json; charset=utf-8' } }), 406, 'not_acceptable')
    expect((await get('/v1/entities?page[limit]=1', { headers: { Accept: 'application/vnd.api+json; charset=utf-8, application/vnd.api+json' } })).status).toBe(200)
    expect((await get('/v1/entities?page[limit]=1', { headers: { Accept: 'application/vnd.api+json; profile="https://example.com/p"' } })).status).toBe(200)
    expect((await get('/v1/entities?page[limit]=1', { headers: { Accept: 'application/json, */*' } })).status).toBe(200)
    await expectError(await get('/v1/entities', { headers: { 'Content-Type': 'application/vnd.api+json; version=1' } }), 415, 'unsupported_media_type')
  })

  it('limits each key: 429 with Retry-After, RateLimit headers on every answer', async () => {
    let now = 0
    const limited = createRegistry({
      store,
      auth: createApiKeyAuthenticator({ keys: [API_KEY, 'other-key'] }),
      rateLimit: createTokenBucketRateLimiter({ limit: 2, windowSeconds: 60, now: () => now }),
    })
    const send = (key = API_KEY) => limited.fetch(new Request(`${BASE}/v1/entities?page[limit]=1`, { headers: { Authorization: `Bearer ${key}` } }))
    const first = await send()
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60')
    expect(first.headers.get('ratelimit')).toBe('"default";r=1;t=30')
    expect((await send()).status).toBe(200)
    const refused = await send()
    expect(refused.headers.get('retry-after')).toBe('30')
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/)
    await expectError(refused, 429, 'rate_limited')
    expect((await send('other-key')).status).toBe(200)
    now += 30_000
    expect((await send()).status).toBe(200)
  })

  it('turns an unexpected failure into a 500 document without internals', async () => {
    const failing: EntityStore = {
      ...store,
      listEntities: () => Promise.reject(new Error('SQLITE_CORRUPT: database disk image is malformed at /srv/db.sqlite')),
    }
    const logged: unknown[] = []
    const { get: getFailing } = testRegistry(failing, { onError: (error) => logged.push(error) })
    const response = await getFailing('/v1/entities')
    expect(await response.clone().text()).not.toContain('SQLITE')
    await expectError(response, 500, 'internal_error')
    expect(logged).toHaveLength(1)
  })
})
