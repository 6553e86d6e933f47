import assert from 'node:assert/strict'
import type { z } from 'zod'
import {
  changesDocumentSchema,
  entityCollectionDocumentSchema,
  entityDocumentSchema,
  errorDocumentSchema,
  facetsDocumentSchema,
  searchDocumentSchema,
} from '../contract/schemas.js'
import { readServerSentEvents, type ServerSentEvent } from '../client/server-sent-events.js'

/**
 * The HTTP conformance suite: what any deployment of the registry answers, whatever runs it (Node,
 * Bun, Deno, Next.js, Hattip) and whatever store it reads. It speaks only `fetch` to a server that
 * serves the bundled demo data (`entity-registry serve --demo` does), so it runs on every runtime.
 *
 * ```ts
 * const failures = (await runHttpConformance('http://127.0.0.1:8080', { apiKey })).filter((r) => r.error)
 * ```
 */
export interface ConformanceTarget {
  /** Where the registry is mounted: origin plus base path, e.g. `https://example.org/api/registry`. */
  baseUrl: string
  /** A key the server accepts. */
  apiKey: string
  /** A further check of every JSON:API document, e.g. against the official JSON:API schema. */
  validateDocument?: (document: unknown) => void
}

export interface ConformanceCase {
  name: string
  run(target: ConformanceTarget): Promise<void>
}

export interface ConformanceResult {
  name: string
  /** Why the case failed; absent when it passed. */
  error?: Error
}

/** Runs every case against one server, in order; a failing case does not stop the others. */
export async function runHttpConformance(baseUrl: string, options: Omit<ConformanceTarget, 'baseUrl'>): Promise<ConformanceResult[]> {
  const target = { ...options, baseUrl: baseUrl.replace(/\/+$/, '') }
  const results: ConformanceResult[] = []
  for (const { name, run } of httpConformanceCases) {
    try {
      await run(target)
      results.push({ name })
    } catch (error) {
      results.push({ name, error: error instanceof Error ? error : new Error(String(error)) })
    }
  }
  return results
}

/** The demo data's size, which the paging case counts. */
const DEMO_ENTITIES = 685

function get(target: ConformanceTarget, path: string, init: RequestInit & { key?: string | null } = {}): Promise<Response> {
  const { key = target.apiKey, headers, ...rest } = init
  const url = path.startsWith('http') ? path : `${target.baseUrl}${path}`
  return fetch(url, { ...rest, headers: { ...(key === null ? {} : { Authorization: `Bearer ${key}` }), ...headers } })
}

/** Status, media type, CORS, and a body that is valid JSON:API and keeps the contract. */
async function readDocument<T extends z.ZodType>(target: ConformanceTarget, response: Response, status: number, schema: T): Promise<z.infer<T>> {
  const body = await response.text()
  assert.equal(response.status, status, `status ${response.status}, expected ${status}: ${body.slice(0, 300)}`)
  assert.equal(response.headers.get('content-type'), 'application/vnd.api+json')
  assert.equal(response.headers.get('access-control-allow-origin'), '*')
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff')
  const document: unknown = JSON.parse(body)
  target.validateDocument?.(document)
  const parsed = schema.safeParse(document)
  if (!parsed.success) assert.fail(`breaks the contract: ${parsed.error.message}\n${body.slice(0, 500)}`)
  return parsed.data
}

/** An error document with this status and code, naming the parameter at fault, and nothing internal. */
async function readError(target: ConformanceTarget, response: Response, status: number, code: string, parameter?: string) {
  const text = await response.clone().text()
  assert.doesNotMatch(text, / at .*\.(ts|js):\d+|SELECT |node_modules/i, 'an error must not show internals')
  const [error] = (await readDocument(target, response, status, errorDocumentSchema)).errors
  assert.equal(error!.status, String(status))
  assert.equal(error!.code, code)
  assert.ok(error!.title && error!.detail, 'an error has a title and a detail')
  if (parameter !== undefined) assert.equal(error!.source?.parameter, parameter)
  return error!
}

function assertUnder(target: ConformanceTarget, link: string | undefined, what: string): void {
  assert.ok(link?.startsWith(`${target.baseUrl}/v1/`), `${what} ${link} is not an absolute link under ${target.baseUrl}`)
}

async function firstLegislationWithRendition(target: ConformanceTarget) {
  const page = await readDocument(target, await get(target, '/v1/entities?filter=type:legislation&page[limit]=50'), 200, entityCollectionDocumentSchema)
  for (const entity of page.data) {
    const rendition = (entity.attributes.texts ?? []).flatMap((text) => text.renditions)[0]
    if (rendition !== undefined) return { entity, rendition }
  }
  throw new assert.AssertionError({ message: 'the demo data has legislation with HTML renditions' })
}

export const httpConformanceCases: readonly ConformanceCase[] = [
  {
    name: 'lists entities with absolute links on the public base URL',
    async run(target) {
      const page = await readDocument(target, await get(target, '/v1/entities?page[limit]=5'), 200, entityCollectionDocumentSchema)
      assert.equal(page.data.length, 5)
      assertUnder(target, page.links.self, 'links.self')
      assertUnder(target, page.links.next, 'links.next')
      for (const entity of page.data) assert.equal(entity.links?.self, `${target.baseUrl}/v1/entities/${entity.id}`)
    },
  },
  {
    name: 'pages through every entity once, in id order, by links.next',
    async run(target) {
      const ids: string[] = []
      for (let next: string | undefined = '/v1/entities?page[limit]=100'; next !== undefined; ) {
        const page: z.infer<typeof entityCollectionDocumentSchema> = await readDocument(target, await get(target, next), 200, entityCollectionDocumentSchema)
        ids.push(...page.data.map((entity) => entity.id))
        next = page.links.next
      }
      assert.equal(ids.length, DEMO_ENTITIES)
      assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => (a < b ? -1 : 1)))
    },
  },
  {
    name: 'filters by field and answers a bad filter with 400 naming the parameter',
    async run(target) {
      const page = await readDocument(target, await get(target, '/v1/entities?filter=type:committee%20jurisdiction:US&page[limit]=100'), 200, entityCollectionDocumentSchema)
      assert.ok(page.data.length > 0)
      for (const entity of page.data) assert.equal(entity.type, 'committee')
      await readError(target, await get(target, '/v1/entities?filter=title:%22unclosed'), 400, 'invalid_filter', 'filter')
      await readError(target, await get(target, '/v1/entities?filter=nosuchfield:x'), 400, 'unsupported_field', 'filter')
    },
  },
  {
    name: 'refuses a bad page size with 400 naming the parameter',
    async run(target) {
      await readError(target, await get(target, '/v1/entities?page[limit]=0'), 400, 'invalid_pagination', 'page[limit]')
      await readError(target, await get(target, '/v1/entities?page[limit]=abc'), 400, 'invalid_pagination', 'page[limit]')
    },
  },
  {
    name: 'counts facets that agree with the list pages, and refuses a field it cannot count',
    async run(target) {
      const filter = 'type:committee%20jurisdiction:US'
      const listed = await readDocument(target, await get(target, `/v1/entities?filter=${filter}&page[limit]=100`), 200, entityCollectionDocumentSchema)
      const facets = await readDocument(target, await get(target, `/v1/facets?filter=${filter}&fields=type,status`), 200, facetsDocumentSchema)
      assert.equal(facets.meta.total, listed.data.length)
      assert.deepEqual(facets.meta.facets.type, [{ value: 'committee', count: listed.data.length }])
      const statuses = listed.data.filter((entity) => typeof entity.attributes.status === 'string').length
      assert.equal(facets.meta.facets.status!.reduce((sum, { count }) => sum + count, 0), statuses)
      const all = await readDocument(target, await get(target, '/v1/facets?fields=type'), 200, facetsDocumentSchema)
      assert.equal(all.meta.total, DEMO_ENTITIES)
      await readError(target, await get(target, '/v1/facets?fields=nosuchfield'), 400, 'unsupported_field', 'fields')
    },
  },
  {
    name: 'gets one entity, and answers 404 for an id that never existed',
    async run(target) {
      const { entity } = await firstLegislationWithRendition(target)
      const document = await readDocument(target, await get(target, `/v1/entities/${entity.id}`), 200, entityDocumentSchema)
      assert.deepEqual(document.data, entity)
      assert.equal(document.links.self, `${target.baseUrl}/v1/entities/${entity.id}`)
      await readError(target, await get(target, '/v1/entities/nosuchentity0'), 404, 'not_found')
      await readError(target, await get(target, '/v1/entities/Not-An-Id'), 400, 'invalid_id', 'id')
    },
  },
  {
    name: 'downloads a rendition, with ranges, validators and a sandbox',
    async run(target) {
      const { rendition } = await firstLegislationWithRendition(target)
      const link = rendition.links.content
      assertUnder(target, link, 'a rendition link')
      const whole = await get(target, link)
      const bytes = new Uint8Array(await whole.arrayBuffer())
      assert.equal(whole.status, 200)
      assert.match(whole.headers.get('content-type') ?? '', /^text\/html/)
      assert.equal(whole.headers.get('content-security-policy'), 'sandbox')
      assert.equal(whole.headers.get('x-content-type-options'), 'nosniff')
      assert.ok(bytes.length > 10)
      const part = await get(target, link, { headers: { Range: 'bytes=0-9' } })
      assert.equal(part.status, 206)
      assert.equal(part.headers.get('content-range'), `bytes 0-9/${bytes.length}`)
      assert.deepEqual(new Uint8Array(await part.arrayBuffer()), bytes.slice(0, 10))
      const etag = whole.headers.get('etag')
      assert.ok(etag, 'a rendition has an ETag')
      const unchanged = await get(target, link, { headers: { 'If-None-Match': etag } })
      assert.equal(unchanged.status, 304)
      await unchanged.arrayBuffer()
    },
  },
  {
    name: 'follows the change feed by links.next',
    async run(target) {
      const first = await readDocument(target, await get(target, '/v1/entities/changes?filter=type:person&page[limit]=50'), 200, changesDocumentSchema)
      assert.equal(first.data.length, 50)
      assertUnder(target, first.links.next, 'links.next')
      const second = await readDocument(target, await get(target, first.links.next!), 200, changesDocumentSchema)
      assert.ok(second.data.length > 0)
      assert.ok(second.data[0]!.id > first.data.at(-1)!.id, 'the next page starts after the last change seen')
      await readError(target, await get(target, '/v1/entities/changes?filter=type:person&page[after]=not-a-change'), 400, 'invalid_pagination', 'page[after]')
    },
  },
  {
    name: 'holds a long-poll at the head of the feed for waitSeconds, then answers its cursor; refuses a bad waitSeconds',
    async run(target) {
      for (const value of ['0', '61', 'x']) {
        await readError(target, await get(target, `/v1/entities/changes?filter=type:person&waitSeconds=${value}`), 400, 'invalid_wait', 'waitSeconds')
      }
      const head = await feedHeadCursor(target)
      const started = Date.now()
      const waited = await readDocument(target, await get(target, `/v1/entities/changes?filter=type:person&page[after]=${head}&waitSeconds=1`), 200, changesDocumentSchema)
      assert.deepEqual([waited.data, waited.meta.cursor], [[], head])
      assert.ok(Date.now() - started >= 900, `held for ${Date.now() - started} ms of the 1 s asked`)
    },
  },
  {
    name: 'streams the change feed as server-sent events, each change once and in order, from Last-Event-ID',
    async run(target) {
      const page = await readDocument(target, await get(target, '/v1/entities/changes?filter=type:person&page[limit]=5'), 200, changesDocumentSchema)
      const abort = new AbortController()
      // Last-Event-ID wins over page[after].
      const response = await get(target, `/v1/entities/changes?filter=type:person&page[after]=${page.data[3]!.id}`, {
        headers: { Accept: 'text/event-stream', 'Last-Event-ID': page.data[0]!.id },
        signal: abort.signal,
      })
      try {
        assert.equal(response.status, 200)
        assert.equal(response.headers.get('content-type'), 'text/event-stream')
        assert.equal(response.headers.get('access-control-allow-origin'), '*')
        const events = await readEventBlocks(response.body!, 4)
        assert.deepEqual(
          events.map((event) => [event.event, event.id]),
          page.data.slice(1, 5).map((change) => ['change', change.id]),
        )
        assert.deepEqual(events.map((event) => (JSON.parse(event.data) as { id: string }).id), page.data.slice(1, 5).map((change) => change.id))
      } finally {
        abort.abort()
      }
      await readError(target, await get(target, '/v1/entities/changes?filter=type:person', { headers: { Accept: 'text/event-stream', 'Last-Event-ID': 'not-a-change' } }), 400, 'invalid_pagination')
    },
  },
  {
    name: 'searches, or says search is switched off with 404',
    async run(target) {
      const response = await get(target, '/v1/search?q=senator%20arkansas')
      if (response.status === 404) {
        await readError(target, response, 404, 'search_disabled')
        return
      }
      assert.match(response.headers.get('search-index-lag') ?? '', /^\d+$/, 'Search-Index-Lag: the changes the index has not applied')
      const document = await readDocument(target, response, 200, searchDocumentSchema)
      assert.ok(document.data.length > 0)
      assertUnder(target, document.links.self, 'links.self')
      await readError(target, await get(target, '/v1/search'), 400, 'invalid_filter', 'q')
    },
  },
  {
    name: 'asks for a key with 401, without telling a wrong key from none',
    async run(target) {
      const none = await get(target, '/v1/entities', { key: null })
      assert.equal(none.headers.get('www-authenticate'), 'Bearer')
      await readError(target, none, 401, 'unauthorized')
      await readError(target, await get(target, '/v1/entities', { key: 'not-a-key' }), 401, 'unauthorized')
    },
  },
  {
    name: 'serves its OpenAPI description without a key, on the public base URL',
    async run(target) {
      const response = await get(target, '/v1/openapi.json', { key: null })
      assert.equal(response.status, 200)
      const document = (await response.json()) as { openapi: string; servers: { url: string }[] }
      assert.match(document.openapi, /^3\.1/)
      assert.equal(document.servers[0]!.url, target.baseUrl)
    },
  },
  {
    name: 'answers a CORS preflight, and HEAD without a body',
    async run(target) {
      const preflight = await get(target, '/v1/entities', {
        method: 'OPTIONS',
        key: null,
        headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'GET' },
      })
      assert.equal(preflight.status, 204)
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*')
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/)
      const head = await get(target, '/v1/entities?page[limit]=1', { method: 'HEAD' })
      assert.equal(head.status, 200)
      assert.equal(head.headers.get('content-type'), 'application/vnd.api+json')
      assert.equal((await head.arrayBuffer()).byteLength, 0)
    },
  },
  {
    name: 'refuses writes with 405 and Allow, as a read-only API',
    async run(target) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const response = await get(target, '/v1/entities', { method })
        assert.equal(response.headers.get('allow'), 'GET, HEAD, OPTIONS', method)
        await readError(target, response, 405, 'method_not_allowed')
      }
    },
  },
  {
    name: 'negotiates the JSON:API media type: 406 and 415 as the spec says',
    async run(target) {
      await readError(target, await get(target, '/v1/entities', { headers: { Accept: 'application/vnd.api+json; charset=utf-8' } }), 406, 'not_acceptable')
      const withParameters = { 'Content-Type': 'application/vnd.api+json; charset=utf-8' }
      await readError(target, await get(target, '/v1/entities', { headers: withParameters }), 415, 'unsupported_media_type')
      const anyType = await get(target, '/v1/entities?page[limit]=1', { headers: { Accept: '*/*' } })
      await readDocument(target, anyType, 200, entityCollectionDocumentSchema)
    },
  },
  {
    name: 'answers an unknown path with a 404 error document',
    async run(target) {
      await readError(target, await get(target, '/v1/no-such-endpoint'), 404, 'not_found')
    },
  },
]

/** The feed's head as a person filter's cursor reaches it: the cursor of the last page. */
async function feedHeadCursor(target: ConformanceTarget): Promise<string> {
  let next: string | undefined = '/v1/entities/changes?filter=type:person'
  let cursor = ''
  while (next !== undefined) {
    const document: z.infer<typeof changesDocumentSchema> = await readDocument(target, await get(target, next), 200, changesDocumentSchema)
    cursor = document.meta.cursor!
    next = document.links.next
  }
  return cursor
}

/** The first `count` events of a server-sent event stream, within 20 s; the stream is then cancelled. */
async function readEventBlocks(body: ReadableStream<Uint8Array>, count: number): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = []
  const deadline = Date.now() + 20_000
  for await (const event of readServerSentEvents(body)) {
    events.push(event)
    if (events.length === count || Date.now() > deadline) break
  }
  return events
}
