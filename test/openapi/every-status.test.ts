import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createFileBlobStore } from '../../src/blobs/file-blob-store.js'
import { createRouter } from '../../src/http/router.js'
import type { KyselyStore } from '../../src/kysely/kysely-store.js'
import { createSqliteStore } from '../../src/kysely/sqlite.js'
import { openEmbeddedRegistry, type EmbeddedRegistry } from '../../src/node/embedded-registry.js'
import { DependencyUnavailableError } from '../../src/ports/dependency.js'
import { createTokenBucketRateLimiter } from '../../src/rate-limit/token-bucket.js'
import { createRegistry, type Registry, type RegistryOptions } from '../../src/registry.js'
import { API_KEY, BASE } from '../support/demo.js'
import { jsonApiBodyValidator } from '../support/openapi-schemas.js'

/**
 * Every answer the registry gives, over the demo data in SQLite (as `serve --demo` runs it), is in
 * its OpenAPI document: each endpoint is driven with good requests, malformed ones, unknown ids,
 * traversal in rendition ids, bad keys, the limits, conditional and range requests, every method,
 * and (through stand-ins that fail) each dependency away. Each (path, method, status) answered must
 * be declared, with its required headers and a body its schema accepts (which names the error
 * codes the status may carry); and each one declared must be answered by some request here.
 */

const RENDITION = 'rnd_00000000000000000000000000000000'

interface Probe {
  registry: Registry
  method: string
  path: string
  headers?: Record<string, string>
  address?: string
}

interface Observed {
  template: string
  method: string
  status: number
  code: string | undefined
}

const directory = mkdtempSync(join(tmpdir(), 'every-status-'))
let embedded: EmbeddedRegistry
let store: KyselyStore
let document: any
const observed: Observed[] = []

beforeAll(async () => {
  embedded = await openEmbeddedRegistry({ data: directory, demo: true, apiKeys: [API_KEY], authFailureLimit: 3, metrics: false, print: () => {} })
  // A second connection to the same file, for the registries below; refuses facets that read more than one entity.
  store = await createSqliteStore({ file: join(directory, 'registry.sqlite'), facetScanLimit: 1 })
  document = await (await embedded.registry.fetch(new Request(`${BASE}/v1/openapi.json`))).json()
}, 120_000)

afterAll(async () => {
  await store?.close()
  await embedded?.close()
  rmSync(directory, { recursive: true, force: true })
})

/** A registry over the demo's SQLite file and rendition files, with one key. */
const registryWith = (options: Partial<RegistryOptions>) =>
  createRegistry({ store, blobs: createFileBlobStore(join(directory, 'blobs')), auth: createApiKeyAuthenticator({ keys: [API_KEY] }), ...options })

/** A stand-in for a port whose every method throws what `failure` makes (its other members kept). */
function failing<T extends object>(port: T, failure: () => Error): T {
  return new Proxy(port, {
    get: (target, name) => (typeof Reflect.get(target, name) === 'function' ? () => Promise.reject(failure()) : Reflect.get(target, name)),
  })
}

const storeAway = () => new DependencyUnavailableError('store', 'the database refuses connections', 2)
const bug = () => new Error('a bug')

const route = createRouter('')
/** The document's path template a request's path is served under (the router's own match), or null. */
function templateOf(path: string): string | null {
  const { pathname } = new URL(path, BASE)
  if (pathname === '/v1/openapi.json') return pathname
  return route(pathname)?.path.replace(/:([a-z]+)/g, '{$1}') ?? null
}

it('answers only what the OpenAPI document declares, and all of it', { timeout: 120_000 }, async () => {
  const main = embedded.registry
  const validatorOf = jsonApiBodyValidator(document)

  const bill = (await (await main.fetch(new Request(`${BASE}/v1/entities/hr3590111`, { headers: { Authorization: `Bearer ${API_KEY}` } }))).json()).data
  const download: string = bill.attributes.texts[0].renditions[0].links.content.replace(BASE, '')
  const etag = (await main.fetch(new Request(`${BASE}${download}`, { headers: { Authorization: `Bearer ${API_KEY}` } }))).headers.get('ETag')!
  const wrongExtension = download.replace(/\.[a-z0-9]+$/, '.zip')

  const endpoints = [
    '/v1/entities?page[limit]=3',
    '/v1/entities/changes?filter=type:legislation&page[limit]=3',
    '/v1/entities/hr3590111',
    download,
    '/v1/search?q=health%20care',
    '/v1/facets?fields=type',
    '/v1/openapi.json',
  ]
  const bad = [
    '/v1/entities?filter=party:x',
    '/v1/entities?filter=health',
    '/v1/entities?filter=texts.type:bill',
    '/v1/entities?filter=type:%22person',
    '/v1/entities?filter=type:person&filter=type:bill',
    '/v1/entities?page[limit]=0',
    '/v1/entities?page[limit]=101',
    '/v1/entities?page[after]=NOT!',
    '/v1/entities/changes',
    '/v1/entities/changes?filter=party:x',
    '/v1/entities/changes?filter=texts.type:bill',
    '/v1/entities/changes?filter=health',
    '/v1/entities/changes?filter=type:person&filterScope=sideways',
    '/v1/entities/changes?filter=type:person&waitSeconds=0',
    '/v1/entities/changes?filter=type:person&page[after]=hr3590111',
    '/v1/entities/NOT-AN-ID',
    '/v1/entities/nosuch',
    '/v1/entities/%2e%2e',
    '/v1/entities/hr3590111/renditions/..%2F..%2Fregistry.sqlite',
    '/v1/entities/hr3590111/renditions/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    `/v1/entities/hr3590111/renditions/${RENDITION}`,
    `/v1/entities/NOT-AN-ID/renditions/${RENDITION}.html`,
    `/v1/entities/hr3590111/renditions/${RENDITION}.html`,
    `/v1/entities/nosuch/renditions/${RENDITION}.html`,
    wrongExtension,
    '/v1/search',
    '/v1/search?q=party:x',
    '/v1/search?q=texts.type:bill',
    '/v1/facets?fields=nope',
    '/v1/facets?fields=type,type',
    '/v1/facets?filter=health',
    '/v1/facets?filter=type:%22person',
    '/v1/facets?filter=texts.type:bill',
    '/v1/nosuch',
  ]

  const limited = registryWith({ rateLimit: createTokenBucketRateLimiter({ limit: 1 }) })
  await limited.fetch(new Request(`${BASE}/v1/entities/hr3590111`, { headers: { Authorization: `Bearer ${API_KEY}` } }))
  const noRoomToWait = registryWith({ maxWaiting: 0 })
  const feedHead = (await main.fetch(new Request(`${BASE}/v1/entities?page[limit]=1`, { headers: { Authorization: `Bearer ${API_KEY}` } }))).headers.get('Change-Feed-Head')!
  const limiterAway = registryWith({ rateLimit: { take: () => Promise.reject(new DependencyUnavailableError('rate_limit', 'Redis is away', 3)) } })
  const storeGone = registryWith({ store: failing(store, storeAway), search: { search: () => Promise.reject(storeAway()), lag: async () => 0 } })
  // Its search finds nothing, so that search's own read of the store fails too.
  const broken = registryWith({ store: failing(store, bug), search: { search: async () => [], lag: async () => 0 }, onError: () => {} })
  const blobsGone = registryWith({ blobs: failing(createFileBlobStore(join(directory, 'blobs')), () => new DependencyUnavailableError('blobs', 'S3 is away', 5)) })
  const narrow = registryWith({})
  const searchBroken = registryWith({ search: Promise.resolve(undefined) })

  const probes: Probe[] = []
  for (const method of ['GET', 'HEAD']) {
    for (const path of [...endpoints, ...bad]) probes.push({ registry: main, method, path })
    for (const path of endpoints) {
      const extra = path.includes('?') ? '&' : '?'
      probes.push(
        { registry: main, method, path, headers: { Authorization: '' } },
        { registry: main, method, path, headers: { Authorization: 'Bearer wrong-key-0123456789' } },
        { registry: main, method, path, headers: { Accept: 'application/vnd.api+json; charset=utf-8' } },
        { registry: main, method, path, headers: { 'Content-Type': 'application/vnd.api+json; charset=utf-8' } },
        { registry: main, method, path: `${path}${extra}zzz=1` },
        { registry: main, method, path: `${path}${extra}page[size]=1` },
        { registry: limited, method, path },
        { registry: limiterAway, method, path },
        { registry: storeGone, method, path },
        { registry: broken, method, path },
      )
    }
    probes.push(
      { registry: main, method, path: download, headers: { Range: 'bytes=0-9' } },
      { registry: main, method, path: download, headers: { Range: 'bytes=99999999-' } },
      { registry: main, method, path: download, headers: { Range: 'bytes=0-9', 'If-Range': '"stale"' } },
      { registry: main, method, path: download, headers: { 'If-None-Match': etag } },
      { registry: main, method, path: download, headers: { 'If-None-Match': `"other", W/${etag}` } },
      { registry: blobsGone, method, path: download },
      // No room to wait: a long-poll at the head is refused.
      { registry: noRoomToWait, method, path: `/v1/entities/changes?filter=type:person&page[after]=${feedHead}&waitSeconds=1` },
      { registry: narrow, method, path: '/v1/search?q=health' },
      { registry: narrow, method, path: '/v1/facets?filter=name:Health' },
      { registry: searchBroken, method, path: '/v1/search?q=health' },
    )
    // Wrong keys from one address, past its allowance of failed attempts (3).
    for (let attempt = 0; attempt < 4; attempt++) {
      probes.push({ registry: main, method, path: '/v1/entities/hr3590111', headers: { Authorization: 'Bearer guessed-0123456789' }, address: '192.0.2.7' })
    }
  }
  for (const path of endpoints) {
    probes.push({ registry: main, method: 'OPTIONS', path, headers: { Authorization: '' } })
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) probes.push({ registry: main, method, path })
  }

  for (const { registry, method, path, headers = {}, address } of probes) {
    const given = { Authorization: `Bearer ${API_KEY}`, ...headers }
    if (given.Authorization === '') delete (given as Partial<typeof given>).Authorization
    const response = await registry.fetch(new Request(`${BASE}${path}`, { method, headers: given }), address === undefined ? {} : { address })
    const what = `${method} ${path} ${JSON.stringify(headers)}: ${response.status}`
    const template = templateOf(path)
    if (template === null) {
      expect(response.status, what).toBe(404)
      continue
    }
    const operations = document.paths[template]
    expect(operations, what).toBeDefined()
    const operation = operations[method.toLowerCase()]
    if (operation === undefined) {
      // A method the document does not declare is refused, naming those it does.
      expect(response.status, what).toBe(405)
      expect(new Set(response.headers.get('Allow')!.split(/,\s*/)), what).toEqual(new Set(Object.keys(operations).map((name) => name.toUpperCase())))
      continue
    }
    const declared = operation.responses[String(response.status)]
    expect(declared, `${what} is not in the document`).toBeDefined()
    for (const [name, header] of Object.entries<{ required?: boolean }>(declared.headers ?? {})) {
      if (header.required) expect(response.headers.has(name), `${what}: ${name}`).toBe(true)
    }
    const text = await response.text()
    let code: string | undefined
    const [mediaType, content] = (Object.entries(declared.content ?? {})[0] ?? []) as [string?, { schema: any }?]
    if (method === 'HEAD' || content === undefined) {
      expect(text, what).toBe('')
    } else if (mediaType === 'application/vnd.api+json') {
      expect(response.headers.get('content-type'), what).toBe(mediaType)
      const validate = validatorOf(template, response.status)
      const body = JSON.parse(text)
      expect(validate(body), `${what}: ${JSON.stringify(validate.errors)} in ${text}`).toBe(true)
      code = body.errors?.[0]?.code
    } else {
      expect(text.length, what).toBeGreaterThan(0)
    }
    observed.push({ template, method, status: response.status, code })
  }

  // And the other way: every answer the document declares, and every error code, was given above.
  const seen = new Set(observed.flatMap(({ template, method, status, code }) => [`${method} ${template} ${status}`, `${method} ${template} ${status} ${code}`]))
  const unseen: string[] = []
  for (const [template, operations] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, { responses }] of Object.entries<any>(operations)) {
      for (const [status, response] of Object.entries<any>(responses)) {
        const codes = errorCodesOf(response)
        const answers = codes.length === 0 ? [`${method.toUpperCase()} ${template} ${status}`] : codes.map((code) => `${method.toUpperCase()} ${template} ${status} ${code}`)
        unseen.push(...answers.filter((answer) => !seen.has(answer)))
      }
    }
  }
  expect(unseen).toEqual([])
})

/** The error codes a declared error response allows (its schema's enum); none for another answer, or a HEAD's (no body). */
function errorCodesOf(response: any): string[] {
  const schema = response.content?.['application/vnd.api+json']?.schema
  if (schema === undefined) return []
  return schema.allOf?.[1]?.properties?.errors?.items?.properties?.code?.enum ?? []
}
