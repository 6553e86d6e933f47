/**
 * `serve --read-database` on a real streaming replica: a private PostgreSQL server (the shared one
 * is left alone) copied by `pg_basebackup -R` and started on another port. Its replay is paused to
 * hold it behind the primary: what it serves is then a past snapshot of the primary's.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '../../src/auth/key-format.js'
import { createKeyManager } from '../../src/auth/key-manager.js'
import { createPostgresStore, type KyselyStore } from '../../src/kysely/index.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { ENTITIES as SEARCH_ENTITIES } from '../../src/postgres-search/schema.js'
import { importNdjson } from '../../src/warehouse/import.js'
import { adminUrlOf, startServer, type Server } from '../support/cli.js'
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js'
import { startStreamingReplica, streamingReplicaSkipReason, type StreamingReplica } from '../support/streaming-replica.js'

const KEY = 'replica-test-key-0123456789'
const MAX_REPLICA_LAG_S = 3
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `probe` until it returns true; false if it never did within `timeoutMs`. */
async function within(timeoutMs: number, probe: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await probe()) return true
    if (Date.now() > deadline) return false
    await sleep(50)
  }
}

interface ChangesPage {
  data: { id: string; attributes: { id: string } }[]
  meta: { cursor: string | null }
  links: { next?: string }
}

describe.skipIf(streamingReplicaSkipReason !== null)(`serve --read-database on a streaming replica${streamingReplicaSkipReason ? ` (skipped: ${streamingReplicaSkipReason})` : ''}`, () => {
  let primary: PrivatePostgres | undefined
  let replica: StreamingReplica | undefined
  let onPrimary: KyselyStore | undefined
  let server: Server | undefined
  let made = 0
  const serveData = mkdtempSync(join(tmpdir(), 'er-replica-serve-'))

  /** Imports `count` new people on the primary; their ids. */
  async function importOnPrimary(count: number): Promise<string[]> {
    const ids = Array.from({ length: count }, () => `rp${String(++made).padStart(5, '0')}`)
    const lines = ids.map((id) => JSON.stringify({ id, type: 'person', name: `Replica Person ${id}`, jurisdiction: 'US', texts: [] }))
    const report = await importNdjson(lines, { warehouse: onPrimary!.warehouse, blobs: createMemoryBlobStore(), baseDir: tmpdir() })
    expect(report.errors).toEqual([])
    return ids
  }

  const get = (path: string, key = KEY) => fetch(new URL(path, server!.url), { headers: { Authorization: `Bearer ${key}` } })
  const changesAfter = async (cursor: string | null): Promise<ChangesPage> => {
    const response = await get(`/v1/entities/changes?filter=type:person&page[limit]=100${cursor === null ? '' : `&page[after]=${cursor}`}`)
    expect(response.status).toBe(200)
    return (await response.json()) as ChangesPage
  }
  /** The primary's feed after `cursor`, whole: the changes a replica must serve, in order. */
  const primaryChangesAfter = async (cursor: string | null) => (await onPrimary!.listChanges({ qualifiers: [], after: cursor, limit: 1000, window: 10_000 })).changes.map((change) => change.changeId)
  const searchFinds = async (id: string) => {
    const hits = (await (await get(`/v1/search?q=${encodeURIComponent(`"Replica Person ${id}"`)}`)).json()) as { data: { id: string }[] }
    return hits.data.some((hit) => hit.id === id)
  }
  const ready = async () => {
    const response = await fetch(new URL('/ready', adminUrlOf(server!)))
    return { status: response.status, body: (await response.json()) as { checks: Record<string, string>; replicaLag?: { seconds: number | null; bytes: number } } }
  }
  /** Runs `work` with the replica's replay paused, resumed afterwards whatever happens. */
  async function whilePaused<T>(work: () => Promise<T>): Promise<T> {
    await replica!.pauseReplay()
    try {
      return await work()
    } finally {
      await replica!.resumeReplay()
    }
  }

  beforeAll(async () => {
    try {
      primary = await startPrivatePostgres()
      onPrimary = await createPostgresStore({ connectionString: primary.url })
      await importOnPrimary(3)
      // The copy has the schema and the first entities.
      replica = await startStreamingReplica(primary)
      server = await startServer(
        ['--data', serveData, '--database', primary.url, '--read-database', replica.url, '--search', 'postgres', '--embedder', 'none', '--admin-port', '0', '--max-replica-lag', String(MAX_REPLICA_LAG_S), '--log', 'warn', '--rate-limit', '0', '--api-key', KEY],
      )
    } catch (error) {
      await cleanUp()
      throw error
    }
  }, 60_000)

  /** Stops what was started, once (a failed setup cleans up, then afterAll runs too), and removes the servers' files. */
  async function cleanUp() {
    const [started, store, standby, running] = [primary, onPrimary, replica, server]
    ;[primary, onPrimary, replica, server] = [undefined, undefined, undefined, undefined]
    await running?.stop()
    await store?.close()
    await standby?.destroy()
    await started?.destroy()
    rmSync(serveData, { recursive: true, force: true })
  }
  afterAll(cleanUp, 30_000)

  it('the library: createPostgresStore({ readFrom }) reads from the replica, writes on the primary, and store.primary reads the primary', async () => {
    const store = await createPostgresStore({ connectionString: primary!.url, readFrom: { connectionString: replica!.url } })
    try {
      await replica!.caughtUp()
      const id = `rp${String(++made).padStart(5, '0')}`
      const headBefore = await store.feedHead()
      const counted = async (of: KyselyStore) => (await of.countFacets({ qualifiers: [], fields: ['type'], limit: 10 })).total
      const totalBefore = await counted(store)
      await whilePaused(async () => {
        // A hot standby refuses writes: this one went to the primary.
        await store.warehouse.upsert({ id, type: 'person', name: 'Written Through The Replicated Store' })
        expect(await store.getEntity(id)).toBeNull()
        expect(await store.feedHead()).toBe(headBefore)
        expect((await store.listChanges({ qualifiers: [], after: headBefore, limit: 10, window: 100 })).changes).toEqual([])
        expect(await counted(store)).toBe(totalBefore)
        expect((await store.primary.getEntity(id))?.id).toBe(id)
        expect(await counted(store.primary)).toBe(totalBefore + 1)
        expect(await store.primary.feedHead()).not.toBe(headBefore)
      })
      await replica!.caughtUp()
      expect((await store.getEntity(id))?.id).toBe(id)
    } finally {
      await store.close()
    }
  }, 30_000)

  it('serves what the replica holds: an entity imported on the primary while its replay is paused appears once it resumes', async () => {
    await replica!.caughtUp()
    const [id] = await whilePaused(async () => {
      const ids = await importOnPrimary(1)
      // The primary has it; the replica, paused, does not: neither a get, a page, nor search show it.
      expect(await onPrimary!.getEntity(ids[0]!)).not.toBeNull()
      await sleep(300)
      expect((await get(`/v1/entities/${ids[0]}`)).status).toBe(404)
      const page = (await (await get('/v1/entities?filter=type:person&page[limit]=100')).json()) as { data: { id: string }[] }
      expect(page.data.map((entity) => entity.id)).not.toContain(ids[0])
      // Search inside PostgreSQL: the indexer (on the primary) indexes it there, the replica's index has it not.
      const indexedOnPrimary = await within(15_000, async () => (await sql`select 1 from ${sql.table(SEARCH_ENTITIES)} where id = ${ids[0]}`.execute(onPrimary!.db)).rows.length > 0)
      expect(indexedOnPrimary).toBe(true)
      expect(await searchFinds(ids[0]!)).toBe(false)
      return ids
    })
    expect(await within(2000, async () => (await get(`/v1/entities/${id}`)).status === 200)).toBe(true)
    expect(await within(2000, () => searchFinds(id!))).toBe(true)
  }, 30_000)

  it('keeps the feed gapless across the lag: a cursor the replica has not reached answers an empty page with the cursor unchanged, then the changes in order', async () => {
    await replica!.caughtUp()
    // A cursor advanced on the replica, to its head.
    let onReplica: string | null = null
    for (let page = await changesAfter(null); ; page = await changesAfter(onReplica)) {
      onReplica = page.meta.cursor
      if (page.links.next === undefined) break
    }
    const [ahead, expected] = await whilePaused(async () => {
      await importOnPrimary(3)
      // A cursor taken on the primary, past everything the replica has.
      const primaryHead = (await onPrimary!.feedHead())!
      await importOnPrimary(2)
      for (const cursor of [onReplica, primaryHead]) {
        const page = await changesAfter(cursor)
        expect(page.data).toEqual([])
        expect(page.meta.cursor).toBe(cursor)
        expect(page.links.next).toBeUndefined()
      }
      return [primaryHead, await primaryChangesAfter(onReplica)]
    })
    expect(expected).toHaveLength(5)
    await replica!.caughtUp()
    // Resumed: each cursor reads on from where it stood, no change skipped nor repeated.
    expect((await changesAfter(onReplica)).data.map((change) => change.id)).toEqual(expected)
    expect((await changesAfter(ahead)).data.map((change) => change.id)).toEqual(expected.slice(3))
  }, 30_000)

  it('accepts a key made on the primary at once, and refuses a revoked key within 5 s of the replica replaying the revocation', async () => {
    const keys = createKeyManager(onPrimary!)
    const { key, id } = await whilePaused(async () => {
      const made = await keys.createKey({ org: 'replica-test' })
      // Unknown to the paused replica: looked up on the primary.
      expect((await get('/v1/entities?page[limit]=1', made.key)).status).toBe(200)
      return { key: made.key, id: made.apiKey.id }
    })
    await replica!.caughtUp()
    expect((await get('/v1/entities?page[limit]=1', key)).status).toBe(200)
    await whilePaused(async () => {
      await keys.revokeKey(id)
      // The replica has not replayed the revocation: its answer (active) stands meanwhile.
      expect((await get('/v1/entities?page[limit]=1', key)).status).toBe(200)
    })
    await replica!.caughtUp()
    const resumedAt = Date.now()
    expect(await within(10_000, async () => (await get('/v1/entities?page[limit]=1', key)).status === 401)).toBe(true)
    // The lookup cache's 5 s, with room for a busy machine.
    expect(Date.now() - resumedAt).toBeLessThan(8000)
  }, 30_000)

  it('reports the replica lag on /ready, and fails past --max-replica-lag while the replay is paused', async () => {
    await replica!.caughtUp()
    expect(await within(5000, async () => (await ready()).status === 200)).toBe(true)
    const caughtUp = await ready()
    expect(caughtUp.body.checks.replica).toBe('ok')
    expect(caughtUp.body.replicaLag).toEqual({ seconds: 0, bytes: 0 })
    await whilePaused(async () => {
      await importOnPrimary(1)
      let last = await ready()
      const failed = await within((MAX_REPLICA_LAG_S + 10) * 1000, async () => (last = await ready()).status === 503)
      expect(failed, JSON.stringify(last.body)).toBe(true)
      expect(last.body.checks.replica).toMatch(/^the replica is [\d.]+ s behind the primary \(more than 3 s\)$/)
      expect(last.body.replicaLag!.seconds).toBeGreaterThan(MAX_REPLICA_LAG_S)
      expect(last.body.replicaLag!.bytes).toBeGreaterThan(0)
      const scraped = await (await fetch(new URL('/metrics', adminUrlOf(server!)))).text()
      expect(Number(/^entity_registry_replica_lag_seconds ([\d.]+)$/m.exec(scraped)?.[1])).toBeGreaterThan(MAX_REPLICA_LAG_S)
      expect(Number(/^entity_registry_replica_lag_bytes (\d+)$/m.exec(scraped)?.[1])).toBeGreaterThan(0)
    })
    expect(await within(5000, async () => (await ready()).status === 200)).toBe(true)
  }, 30_000)

  // Last: the primary is stopped, then started again.
  it('serves reads from the replica while the primary is away: pages, search, ready, the known keys accepted, a key unknown to the replica 503', async () => {
    await replica!.caughtUp()
    await primary!.stop()
    try {
      expect((await get('/v1/entities?filter=type:person&page[limit]=5')).status).toBe(200)
      // Search inside PostgreSQL too: its index, and its lag, read on the replica.
      const search = await get(`/v1/search?q=${encodeURIComponent('Replica Person')}`)
      expect(search.status).toBe(200)
      expect(search.headers.get('Search-Index-Lag')).toBe('0')
      const unknown = await get('/v1/entities?page[limit]=1', generateApiKey())
      expect(unknown.status).toBe(503)
      expect(unknown.headers.get('Retry-After')).not.toBeNull()
      // Past --max-replica-lag since the last probe that reached the primary: still ready.
      await sleep((MAX_REPLICA_LAG_S + 0.5) * 1000)
      const probe = await ready()
      expect(probe.status, JSON.stringify(probe.body)).toBe(200)
      expect(probe.body.replicaLag).toEqual({ seconds: 0, bytes: 0 })
    } finally {
      await primary!.start()
    }
  }, 30_000)
})
