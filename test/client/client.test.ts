import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createClient, RegistryError, type EntityResource, type MirrorCheckpoint } from '../../src/client/index.js'
import { openStore } from '../../src/kysely/index.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import { serve, type RunningServer } from '../../src/node/index.js'
import type { RegistryStore } from '../../src/ports/store.js'
import { createTokenBucketRateLimiter } from '../../src/rate-limit/token-bucket.js'
import { createRegistry } from '../../src/registry.js'
import { API_KEY, DEMO_RECORDS, importDemo } from '../support/demo.js'

/** A registry over the demo data on a real port. */
async function demoServer(options: { rateLimit?: number } = {}) {
  const store = createMemoryStore()
  const blobs = await importDemo(store.warehouse, createMemoryBlobStore())
  const registry = createRegistry({
    store,
    blobs,
    auth: createApiKeyAuthenticator({ keys: [API_KEY] }),
    ...(options.rateLimit ? { rateLimit: createTokenBucketRateLimiter({ limit: options.rateLimit, windowSeconds: 1 }) } : {}),
  })
  return { store, server: await serve(registry, { port: 0 }) }
}

describe('client', () => {
  let store: RegistryStore
  let server: RunningServer
  beforeAll(async () => ({ store, server } = await demoServer()))
  afterAll(() => server.close())
  const client = () => createClient({ baseUrl: server.url, apiKey: API_KEY })

  it('lists every entity once, in id order, following links.next', async () => {
    const ids: string[] = []
    for await (const entity of client().list({ limit: 7 })) ids.push(entity.id)
    expect(ids).toHaveLength(DEMO_RECORDS.length)
    expect(ids).toEqual([...ids].sort())
  })

  it('lists a filter, gets an entity through a merge, and reads the feed to its head', async () => {
    const bills: EntityResource[] = []
    for await (const entity of client().list({ filter: 'type:legislation' })) bills.push(entity)
    expect(bills).toHaveLength(19)
    await store.warehouse.upsert({ id: 'clientsrc', type: 'person', name: 'Merged Away' })
    await store.warehouse.merge('clientsrc', 'hr3590111')
    expect((await client().get('clientsrc')).id).toBe('hr3590111')
    let last: string | undefined
    for await (const change of client().changes({ filter: 'type:person' })) last = change.attributes.changeType
    expect(last).toBe('merge')
  })

  it('downloads a rendition, whole and by range', async () => {
    const bill = await client().get('hr3590111')
    const url = bill.attributes.texts![0]!.renditions[0]!.links.content
    const whole = await client().download(url)
    const bytes = new Uint8Array(await new Response(whole.body).arrayBuffer())
    expect(whole.status).toBe(200)
    expect(whole.headers.get('content-type')).toMatch(/^text\/html/)
    const part = await client().download(url, { range: { start: 10, end: 19 } })
    expect(part.status).toBe(206)
    expect(new Uint8Array(await new Response(part.body).arrayBuffer())).toEqual(bytes.slice(10, 20))
  })

  it('throws the JSON:API error objects of an error answer', async () => {
    const error = await client()
      .list({ filter: 'party:x' })
      [Symbol.asyncIterator]()
      .next()
      .catch((reason: unknown) => reason)
    expect(error).toBeInstanceOf(RegistryError)
    expect((error as RegistryError).status).toBe(400)
    expect((error as RegistryError).errors[0]).toMatchObject({ code: 'unsupported_field', source: { parameter: 'filter' } })
    const unauthorized = await createClient({ baseUrl: server.url, apiKey: 'wrong' })
      .get('hr3590111')
      .catch((reason: unknown) => reason)
    expect(unauthorized).toMatchObject({ status: 401, code: 'unauthorized' })
  })

  it('retries network errors and 5xx answers with backoff, then gives up', async () => {
    let calls = 0
    const flaky: typeof fetch = async (input, init) => {
      calls++
      if (calls === 1) throw new TypeError('fetch failed')
      if (calls === 2) return new Response('{"errors":[{"status":"503","code":"unavailable"}]}', { status: 503 })
      return fetch(input, init)
    }
    const retrying = createClient({ baseUrl: server.url, apiKey: API_KEY, fetch: flaky, retry: { baseDelayMs: 5 } })
    expect((await retrying.get('hr3590111')).id).toBe('hr3590111')
    expect(calls).toBe(3)
    const failing = createClient({
      baseUrl: server.url,
      fetch: async () => new Response('{"errors":[{"status":"502","code":"bad_gateway"}]}', { status: 502 }),
      retry: { retries: 2, baseDelayMs: 1 },
    })
    expect(await failing.get('x').catch((reason: unknown) => reason)).toMatchObject({ status: 502, code: 'bad_gateway' })
  })
})

it('waits as long as Retry-After says on 429, and then succeeds', async () => {
  const { server } = await demoServer({ rateLimit: 1 })
  try {
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY })
    await client.get('hr3590111')
    const started = performance.now()
    expect((await client.get('hr3590111')).id).toBe('hr3590111')
    expect(performance.now() - started).toBeGreaterThanOrEqual(900)
  } finally {
    await server.close()
  }
})

describe('mirror', () => {
  const WA = 'type:person jurisdiction:US-WA'

  it('keeps an exact copy of a subset while another process writes, across a restart from its checkpoint', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'er-mirror-'))
    const location = join(directory, 'registry.sqlite')
    const store = await openStore(location)
    const server = await serve(createRegistry({ store, auth: createApiKeyAuthenticator({ keys: [API_KEY] }) }), { port: 0 })
    try {
      for (let index = 0; index < 60; index++) {
        await store.warehouse.upsert({ id: `p${index}`, type: 'person', name: `p${index}`, jurisdiction: index % 2 ? 'US-WA' : 'US-OR' })
      }
      const client = createClient({ baseUrl: server.url, apiKey: API_KEY })
      const copy = new Map<string, EntityResource>()
      let saved: MirrorCheckpoint | null = null
      let applied = 0
      const stop = new AbortController()
      const options = {
        filter: WA,
        onUpsert: (entity: EntityResource) => {
          copy.set(entity.id, entity)
          if (++applied === 150) stop.abort(new Error('killed halfway'))
        },
        onRemove: (id: string) => void copy.delete(id),
        checkpoint: { load: () => saved, save: (checkpoint: MirrorCheckpoint) => void (saved = checkpoint) },
        pollIntervalMs: 20,
      }

      const writer = runWriter(location, 7, 600)
      await expect(client.mirror({ ...options, signal: stop.signal })).rejects.toThrow('killed halfway')
      expect(saved).not.toBeNull()
      await writer
      // Restarted from its checkpoint (the copy kept what was applied before the kill).
      await client.mirror({ ...options, once: true })

      const expected = new Map<string, EntityResource>()
      for await (const entity of client.list({ filter: WA })) expected.set(entity.id, entity)
      expect(expected.size).toBeGreaterThan(0)
      expect([...copy.keys()].sort()).toEqual([...expected.keys()].sort())
      for (const [id, entity] of expected) expect(copy.get(id)).toEqual(entity)

      // A fresh mirror, no checkpoint, agrees as well.
      const fresh = new Map<string, EntityResource>()
      await client.mirror({ filter: WA, once: true, onUpsert: (entity) => void fresh.set(entity.id, entity), onRemove: (id) => void fresh.delete(id) })
      expect(fresh).toEqual(expected)
    } finally {
      await server.close()
      await store.close()
      await rm(directory, { recursive: true, force: true })
    }
  })

  it("live: applies a change as soon as it commits, following the feed's event stream instead of polling it", async () => {
    const store = createMemoryStore()
    await store.warehouse.upsert({ id: 'p1', type: 'person', name: 'p1', jurisdiction: 'US-WA' })
    const server = await serve(createRegistry({ store, auth: createApiKeyAuthenticator({ keys: [API_KEY] }) }), { port: 0 })
    const stop = new AbortController()
    try {
      const client = createClient({ baseUrl: server.url, apiKey: API_KEY })
      const copy = new Set<string>()
      let applied: () => void = () => {}
      const running = client
        .mirror({ filter: WA, live: true, pollIntervalMs: 60_000, signal: stop.signal, onUpsert: (entity) => (copy.add(entity.id), applied()), onRemove: (id) => void copy.delete(id) })
        .catch(() => undefined)
      await expect.poll(() => copy.has('p1')).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 200))
      const seen = new Promise<void>((resolve) => (applied = resolve))
      const started = performance.now()
      await store.warehouse.upsert({ id: 'p2', type: 'person', name: 'p2', jurisdiction: 'US-WA' })
      await seen
      // Well before the 60 s a poll would wait.
      expect(performance.now() - started).toBeLessThan(5000)
      expect([...copy].sort()).toEqual(['p1', 'p2'])
      stop.abort()
      await running
    } finally {
      await server.close()
    }
  })
})

function runWriter(location: string, seed: number, count: number): Promise<void> {
  const writer = fileURLToPath(new URL('../support/random-writer.mjs', import.meta.url))
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [writer, location, String(seed), String(count)], (error, stdout) =>
      error ? reject(error) : stdout.includes('done') ? resolve() : reject(new Error(stdout)),
    )
  })
}
