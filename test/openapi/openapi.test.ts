import { Validator } from '@seriousme/openapi-schema-validator'
import { beforeAll, describe, expect, it } from 'vitest'
import { createWordVectorEmbedder } from '../../src/embedders/index.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import { createIndexer } from '../../src/search/indexer.js'
import { createSearch } from '../../src/search/search-service.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import { createTokenBucketRateLimiter } from '../../src/rate-limit/token-bucket.js'
import { importDemo, testRegistry, BASE } from '../support/demo.js'
import { jsonApiBodyValidator } from '../support/openapi-schemas.js'

/** The OpenAPI document the registry serves, checked as a document and against real answers. */
describe('OpenAPI document', () => {
  const store = createMemoryStore()
  const blobs = createMemoryBlobStore()
  const index = createMemorySearchIndex()
  const embedder = createWordVectorEmbedder()
  const search = createSearch(store, { index, embedder })
  const { registry, get } = testRegistry(store, { blobs, search, rateLimit: createTokenBucketRateLimiter({ limit: 1000 }) })
  let document: any
  beforeAll(async () => {
    await importDemo(store.warehouse, blobs)
    await store.warehouse.upsert({ id: 'oamerged', type: 'person', name: 'Merged' })
    await store.warehouse.merge('oamerged', 'hr3590111')
    await createIndexer({ store, index, embedder }).catchUp()
    const response = await registry.fetch(new Request(`${BASE}/v1/openapi.json`))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    document = await response.json()
  })

  it('is served without a key and is a valid OpenAPI 3.1 document on the served origin', async () => {
    const result = await new Validator().validate(document)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(document.openapi).toBe('3.1.0')
    expect(document.servers).toEqual([{ url: BASE }])
  })

  it('describes every answer of every endpoint as it is served', async () => {
    const validatorOf = jsonApiBodyValidator(document)

    const bill = (await (await get('/v1/entities/hr3590111')).json()).data
    const download = bill.attributes.texts[0].renditions[0].links.content.replace(BASE, '')
    const cases: [string, string, number, Record<string, string>?][] = [
      ['/v1/entities', '/v1/entities', 200],
      ['/v1/entities?filter=type:person%20jurisdiction:US-WA&page[limit]=3', '/v1/entities', 200],
      ['/v1/entities?filter=party:x', '/v1/entities', 400],
      ['/v1/entities?page[limit]=0', '/v1/entities', 400],
      ['/v1/entities/changes?filter=type:legislation', '/v1/entities/changes', 200],
      ['/v1/entities/changes?filter=type:person&filterScope=either', '/v1/entities/changes', 200],
      ['/v1/entities/changes', '/v1/entities/changes', 400],
      ['/v1/entities/hr3590111', '/v1/entities/{id}', 200],
      ['/v1/entities/oamerged', '/v1/entities/{id}', 200],
      ['/v1/entities/nosuch', '/v1/entities/{id}', 404],
      ['/v1/entities/NOT-AN-ID', '/v1/entities/{id}', 400],
      [download, '/v1/entities/{id}/renditions/{file}', 200],
      [download, '/v1/entities/{id}/renditions/{file}', 206, { Range: 'bytes=0-9' }],
      ['/v1/entities/hr3590111/renditions/rnd_00000000000000000000000000000000.html', '/v1/entities/{id}/renditions/{file}', 404],
      ['/v1/entities', '/v1/entities', 406, { Accept: 'application/vnd.api+json; charset=utf-8' }],
      ['/v1/entities', '/v1/entities', 401, { Authorization: 'Bearer wrong' }],
      ['/v1/search?q=health%20care%20type:legislation', '/v1/search', 200],
      ['/v1/search?q=type:committee', '/v1/search', 200],
      ['/v1/search?q=party:x', '/v1/search', 400],
    ]
    // The rate limit's own answer, from a registry that allows one request.
    const limited = testRegistry(store, { rateLimit: createTokenBucketRateLimiter({ limit: 1 }) })
    await limited.get('/v1/entities/hr3590111')
    const tooMany = await limited.get('/v1/entities/hr3590111')
    expect(tooMany.status).toBe(429)
    expect(tooMany.headers.has('Retry-After')).toBe(true)
    expect(document.paths['/v1/entities/{id}'].get.responses['429'].headers['Retry-After'].required).toBe(true)
    for (const [path, template, status, headers] of cases) {
      const response = await get(path, headers ? { headers } : {})
      expect(response.status, path).toBe(status)
      const described = document.paths[template].get.responses[String(status)]
      expect(described, `${template} ${status}`).toBeDefined()
      for (const [name, header] of Object.entries<{ required: boolean }>(described.headers ?? {})) {
        if (header.required) expect(response.headers.has(name), `${path}: ${name}`).toBe(true)
      }
      // Every answer here is rate limited, so the limit's headers are there, as described.
      if (status !== 401) expect(response.headers.has('RateLimit'), path).toBe(true)
      const [mediaType] = Object.keys(described.content ?? {})
      if (mediaType !== 'application/vnd.api+json') continue
      expect(response.headers.get('content-type')).toBe(mediaType)
      const validate = validatorOf(template, status)
      const body = await response.json()
      expect(validate(body), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true)
    }
  })
})
