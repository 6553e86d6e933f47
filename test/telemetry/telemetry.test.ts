import { Writable } from 'node:stream'
import { beforeAll, describe, expect, it } from 'vitest'
import { randomUuid } from '../../src/http/request-id.js'
import { createMemoryStore } from '../../src/memory/index.js'
import { DependencyUnavailableError } from '../../src/ports/dependency.js'
import type { EntityStore } from '../../src/ports/entity-store.js'
import { createTokenBucketRateLimiter } from '../../src/rate-limit/token-bucket.js'
import { createAdminHandler } from '../../src/telemetry/admin-handler.js'
import { createLogger } from '../../src/telemetry/logger.js'
import { createMetrics } from '../../src/telemetry/metrics.js'
import { createReadiness, replicaCheck, SEARCH_BUILT_WITHIN, searchCheck, storeCheck, type ReplicaLag } from '../../src/telemetry/readiness.js'
import { createTelemetry } from '../../src/telemetry/telemetry.js'
import { timedStore } from '../../src/telemetry/timed-store.js'
import { API_KEY, importDemo, testRegistry } from '../support/demo.js'
import { expectError } from '../support/documents.js'

/** A pino logger writing JSON lines into an array. */
async function capturedLogger() {
  const lines: Record<string, unknown>[] = []
  const raw: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        raw.push(line)
        lines.push(JSON.parse(line) as Record<string, unknown>)
      }
      done()
    },
  })
  return { logger: await createLogger({ level: 'info', destination: stream }), lines, raw }
}

/** A store of which every read fails as a database that went away does (a fault double). */
function awayStore(store: EntityStore): EntityStore {
  const away = () => Promise.reject(new DependencyUnavailableError('store', 'the database does not answer', 2))
  return { ...store, listEntities: away, getEntity: away, listChanges: away, feedHead: away, isChangeId: (id) => store.isChangeId(id) }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('telemetry of requests', () => {
  const store = createMemoryStore()
  beforeAll(() => importDemo(store.warehouse))

  it('keeps a valid X-Request-Id, makes one for a missing or invalid one, and echoes it', async () => {
    const { get } = testRegistry(store)
    const kept = await get('/v1/entities/s1113', { headers: { 'X-Request-Id': 'trace-0123:abc' } })
    expect(kept.headers.get('X-Request-Id')).toBe('trace-0123:abc')
    for (const invalid of ['x'.repeat(129), 'has space', '']) {
      const made = await get('/v1/entities/s1113', { headers: { 'X-Request-Id': invalid } })
      expect(made.headers.get('X-Request-Id')).toMatch(/^[0-9a-f-]{36}$/)
    }
    const none = await get('/v1/entities/s1113')
    expect(none.headers.get('X-Request-Id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(none.headers.get('Access-Control-Expose-Headers')).toContain('X-Request-Id')
  })

  it('makes ids that are random version 4 UUIDs, none twice, across refills of its random bytes', () => {
    const ids = Array.from({ length: 1000 }, () => randomUuid())
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(ids).size).toBe(ids.length)
    // Every hex digit of the random positions turns up: no byte stuck at a value.
    const randomDigits = new Set(ids.flatMap((id) => [...id.replaceAll('-', '').slice(0, 12)]))
    expect(randomDigits.size).toBe(16)
  })

  it('logs one JSON line a request with id, route pattern, status, bytes, duration and the key public id, never the key', async () => {
    const { logger, lines, raw } = await capturedLogger()
    const { get } = testRegistry(store, { telemetry: createTelemetry({ logger }) })
    const response = await get('/v1/entities/s1113', { headers: { 'X-Request-Id': 'req-1' } })
    const body = new Uint8Array(await response.arrayBuffer())
    await get('/v1/nowhere', { headers: { 'X-Request-Id': 'req-2' } })
    logger.flush()
    await settle()
    const [first, second] = lines
    expect(first).toMatchObject({ msg: 'request', requestId: 'req-1', method: 'GET', route: '/v1/entities/:id', status: 200, bytes: body.byteLength })
    expect(first!.key).toBe('configured-1')
    expect(first!.durationMs).toBeGreaterThan(0)
    expect(second).toMatchObject({ requestId: 'req-2', route: null, status: 404 })
    expect(raw.join('\n')).not.toContain(API_KEY)
    expect(raw.join('\n')).not.toMatch(/bearer/i)
  })

  it('logs an error that became a 500 with its stack and request id, and answers without either', async () => {
    const { logger, lines } = await capturedLogger()
    const broken: EntityStore = { ...store, getEntity: () => Promise.reject(new TypeError('a bug deep inside')), isChangeId: (id) => store.isChangeId(id) }
    const { get } = testRegistry(broken, {
      telemetry: createTelemetry({ logger }),
      onError: (error, _request, requestId) => logger.error({ err: error, requestId }, 'unexpected error'),
    })
    const response = await get('/v1/entities/s1113', { headers: { 'X-Request-Id': 'boom-1' } })
    const text = await response.text()
    expect(response.status).toBe(500)
    expect(text).not.toContain('a bug deep inside')
    expect(text).not.toContain('at ')
    logger.flush()
    await settle()
    const logged = lines.find((line) => line.level === 50)!
    expect(logged.requestId).toBe('boom-1')
    expect((logged.err as { stack: string }).stack).toContain('TypeError: a bug deep inside')
  })

  it('answers a store that is away 503 store_unavailable with Retry-After, counts it, and warns once, not once a request', async () => {
    const { logger, lines } = await capturedLogger()
    const metrics = createMetrics({ processMetrics: false })
    const { get } = testRegistry(awayStore(store), { telemetry: createTelemetry({ logger, metrics }) })
    for (const path of ['/v1/entities', '/v1/entities/s1113', '/v1/entities/changes?filter=type:person']) {
      const response = await get(path)
      await expectError(response, 503, 'store_unavailable')
      expect(response.headers.get('Retry-After')).toBe('2')
    }
    logger.flush()
    await settle()
    expect(lines.filter((line) => line.level === 40)).toHaveLength(1)
    expect(lines.find((line) => line.level === 40)).toMatchObject({ dependency: 'store', msg: 'store unavailable' })
    expect(await metrics.register.getSingleMetricAsString('entity_registry_dependency_errors_total')).toContain('entity_registry_dependency_errors_total{dependency="store"} 3')
  })

  it('counts requests by route pattern and status, their latency, store query time and rate-limited requests', async () => {
    const metrics = createMetrics({ processMetrics: false })
    const { get } = testRegistry(timedStore(store, metrics), {
      telemetry: createTelemetry({ metrics }),
      rateLimit: createTokenBucketRateLimiter({ limit: 3 }),
    })
    for (let index = 0; index < 5; index++) await get('/v1/entities/s1113')
    const text = await metrics.register.metrics()
    expect(text).toContain('entity_registry_http_requests_total{route="/v1/entities/:id",method="GET",status="200"} 3')
    expect(text).toContain('entity_registry_http_requests_total{route="unmatched",method="GET",status="429"} 2')
    expect(text).toContain('entity_registry_rate_limited_requests_total 2')
    expect(text).toContain('entity_registry_http_request_duration_seconds_count{route="/v1/entities/:id"} 3')
    expect(text).toMatch(/entity_registry_store_query_duration_seconds_count\{operation="get_entity"\} [1-9]/)
    expect(text).toContain('entity_registry_http_requests_in_flight 0')
  })

  it('reads the feed head and the index lag at each scrape; a gauge whose source fails keeps its last value', async () => {
    const metrics = createMetrics({ processMetrics: false })
    let head: Promise<number | null> = Promise.resolve(685)
    metrics.observe({ feedHead: () => head, searchLag: async () => ({ changes: 12, seconds: 3.5 }) })
    const text = await metrics.register.metrics()
    expect(text).toContain('entity_registry_search_index_lag_changes 12')
    expect(text).toContain('entity_registry_search_index_lag_seconds 3.5')
    expect(text).toContain('entity_registry_feed_head 685')
    head = Promise.reject(new Error('away'))
    expect(await metrics.register.metrics()).toContain('entity_registry_feed_head 685')
  })
})

describe('admin handler', () => {
  const store = createMemoryStore()
  beforeAll(() => importDemo(store.warehouse))
  const admin = (path: string, method = 'GET') => new Request(`http://admin.test${path}`, { method })

  it('answers /live, /ready and /metrics with no key', async () => {
    const metrics = createMetrics()
    const handler = createAdminHandler({ readiness: createReadiness([storeCheck(store)]), metrics })
    expect(await (await handler.fetch(admin('/live'))).json()).toEqual({ status: 'live' })
    const ready = await handler.fetch(admin('/ready'))
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok' } })
    const scraped = await handler.fetch(admin('/metrics'))
    expect(scraped.headers.get('Content-Type')).toContain('text/plain')
    expect(await scraped.text()).toContain('entity_registry_process_resident_memory_bytes')
    expect((await handler.fetch(admin('/elsewhere'))).status).toBe(404)
    expect((await handler.fetch(admin('/live', 'POST'))).status).toBe(405)
  })

  it('is not ready, naming what, when a check fails or does not answer in time, and once draining', async () => {
    const readiness = createReadiness(
      [storeCheck(awayStore(store)), { name: 'search', check: () => new Promise(() => {}) }, { name: 'blobs', check: async () => undefined }],
      { timeoutMs: 200 },
    )
    const handler = createAdminHandler({ readiness, basePath: '/admin' })
    const started = performance.now()
    const response = await handler.fetch(admin('/admin/ready'))
    expect(performance.now() - started).toBeLessThan(1000)
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual({
      status: 'not ready',
      checks: { store: 'the database does not answer', search: 'no answer within 200 ms', blobs: 'ok' },
    })
    const healthy = createReadiness([storeCheck(store)])
    healthy.drain()
    expect(await healthy.check()).toEqual({ ready: false, checks: { server: 'shutting down' } })
  })

  it("reports a replica's lag beside the checks, and is not ready past its bound or while the lag is unknown", async () => {
    let lag: ReplicaLag = { seconds: 0, bytes: 0 }
    const replicaLag = async () => lag
    const handler = createAdminHandler({ readiness: createReadiness([storeCheck(store), replicaCheck(replicaLag, 30)], { replicaLag }) })
    const ready = async () => {
      const response = await handler.fetch(admin('/ready'))
      return { status: response.status, body: await response.json() }
    }
    expect(await ready()).toEqual({ status: 200, body: { status: 'ready', checks: { store: 'ok', replica: 'ok' }, replicaLag: { seconds: 0, bytes: 0 } } })
    lag = { seconds: 30, bytes: 4096 }
    expect((await ready()).status).toBe(200)
    lag = { seconds: 30.5, bytes: 8192 }
    expect(await ready()).toEqual({
      status: 503,
      body: { status: 'not ready', checks: { store: 'ok', replica: 'the replica is 30.5 s behind the primary (more than 30 s)' }, replicaLag: { seconds: 30.5, bytes: 8192 } },
    })
    lag = { seconds: null, bytes: 8192 }
    expect((await ready()).body.checks.replica).toBe('the replica is 8192 bytes behind the primary, since an unknown time')
  })

  it('stays ready while a check is merely slow (a busy machine), on its last answer; fails on a dependency error, or once the last answer is too old', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    let buildLag: () => Promise<number | undefined> = async () => 0
    const readiness = createReadiness([storeCheck(store), searchCheck(() => buildLag(), SEARCH_BUILT_WITHIN)], { timeoutMs: 200, lastAnswerMs: 2000 })
    const ready = { ready: true, checks: { store: 'ok', search: 'ok' } }
    expect(await readiness.check()).toEqual(ready)
    // Slowed to five times the probe's wait: the probe answers in time, on the check's last answer.
    buildLag = async () => {
      await sleep(1000)
      return 0
    }
    const started = performance.now()
    expect(await readiness.check()).toEqual(ready)
    expect(performance.now() - started).toBeLessThan(900)
    await sleep(1000)
    // A dependency that is away (the feed's store, which the lag reads): not ready at once.
    buildLag = () => Promise.reject(new DependencyUnavailableError('store', 'the search index does not answer'))
    expect(await readiness.check()).toEqual({ ready: false, checks: { store: 'ok', search: 'the search index does not answer' } })
    buildLag = async () => 0
    expect(await readiness.check()).toEqual(ready)
    // One that stops answering at all: its last answer stands for lastAnswerMs, then it fails; once
    // it answers again, so does the check (the hung run is given up).
    buildLag = () => new Promise<never>(() => {})
    expect(await readiness.check()).toEqual(ready)
    await sleep(2100)
    expect(await readiness.check()).toEqual({ ready: false, checks: { store: 'ok', search: 'no answer within 200 ms' } })
    await sleep(2100)
    buildLag = async () => 0
    expect(await readiness.check()).toEqual(ready)
  })

  it("reports the search index's lag beside the checks, still ready; a lag that fails or is late is left out", async () => {
    let searchLag: () => Promise<{ changes: number; seconds: number } | null> = async () => ({ changes: 41000, seconds: 12.5 })
    const handler = createAdminHandler({ readiness: createReadiness([storeCheck(store)], { timeoutMs: 200, searchLag: () => searchLag() }) })
    const ready = await handler.fetch(admin('/ready'))
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready', checks: { store: 'ok' }, searchIndexLag: { changes: 41000, seconds: 12.5 } })
    for (const failing of [async () => null, () => Promise.reject(new Error('index away')), () => new Promise<never>(() => {})]) {
      searchLag = failing
      const response = await handler.fetch(admin('/ready'))
      expect([response.status, await response.json()]).toEqual([200, { status: 'ready', checks: { store: 'ok' } }])
    }
  })
})
