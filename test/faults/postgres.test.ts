/**
 * PostgreSQL going away under load (issues 18 and 40): connections cut, the server restarted or
 * stopped, an import losing its database. The registry runs as `entity-registry serve` over a private
 * server (test/support/private-postgres.ts), which these tests stop and restart without disturbing
 * the shared one, with its search index inside it; 10 clients load it with every kind of request, a
 * mirror follows the feed, and a writer changes entities meanwhile.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore } from '../../src/kysely/postgres.js'
import { isDependencyUnavailable } from '../../src/ports/dependency.js'
import { adminUrlOf, CLI, startServer, type Server } from '../support/cli.js'
import { privatePostgresSkipReason, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js'
import { duringOutage, expectEveryKindBack, expectEveryKindUnavailable, expectMirrorEqualsList, expectOutageHandled, pathsOfEveryKind, sleep } from './harness.js'
import { withPostgresClient } from '../support/postgres-client.js'

const API_KEY = 'er_fault_test_key'
/** The entity the writer merges into a000041 first: the load's merged get. */
const MERGED = 'a000039'
/** Every request answered 200 this long after the server's return (issue 40). */
const RECOVERED_WITHIN_MS = 3000
/** The load's concurrent clients (`startLoad`'s default), and how often the backends are terminated. */
const LOAD_CLIENTS = 10
const CUTS = 5
const IMPORT_BATCH = 500


let postgres: PrivatePostgres
let directory: string

describe.skipIf(privatePostgresSkipReason !== null)('PostgreSQL going away', () => {
  beforeAll(async () => {
    postgres = await startPrivatePostgres()
    directory = await mkdtemp(join(tmpdir(), 'er-faults-postgres-'))
  })
  afterAll(async () => {
    await postgres?.destroy()
    if (directory) await rm(directory, { recursive: true, force: true })
  })

  /**
   * The CLI's server over the private database (the demo data, with one merge; search inside the
   * database), the load of every kind of request, a mirror and a writer.
   */
  async function underLoad(outage: (admin: string) => Promise<{ awayAt: number; backAt: number }>, database = postgres.url) {
    const server = await startServer(['--data', directory, '--database', database, '--demo', '--search', 'postgres', '--embedder', 'none', '--api-key', API_KEY, '--rate-limit', '0', '--admin-port', '0'])
    try {
      const writer = await startWriter(postgres.url)
      const kinds = await pathsOfEveryKind(server.url, API_KEY, MERGED)
      const { mirror, ...seen } = await duringOutage(server.url, API_KEY, Object.values(kinds), () => outage(adminUrlOf(server)), { settleMs: RECOVERED_WITHIN_MS + 2000 })
      const writes = await writer.stop()
      expect(server.process.exitCode, 'the server exited').toBeNull()
      expect(writes, 'the writer wrote nothing').toBeGreaterThan(0)
      await expectMirrorEqualsList(server.url, API_KEY, mirror)
      return { ...seen, kinds }
    } finally {
      await server.stop()
    }
  }

  it('keeps answering while its connections are terminated, again and again', async () => {
    const { outcomes, awayAt, backAt, kinds } = await underLoad(async () => {
      const awayAt = Date.now()
      for (let cut = 0; cut < CUTS; cut++) {
        expect(await postgres.terminateBackends()).toBeGreaterThan(0)
        await sleep(700)
      }
      return { awayAt, backAt: Date.now() }
    })
    // A query sent on a connection as it is cut answers 503 (the pool's idle ones go unnoticed):
    // at most that, a request of each client in flight at each cut (not a share of all requests:
    // on a busy machine every request may be in flight at a cut).
    const unavailable = outcomes.filter((outcome) => outcome.status === 503)
    expectOutageHandled(outcomes, { code: unavailable.length > 0 ? 'store_unavailable' : null, awayAt, backAt })
    expect(unavailable.length).toBeLessThanOrEqual(LOAD_CLIENTS * CUTS)
    expectEveryKindBack(outcomes, kinds, { backAt, withinMs: RECOVERED_WITHIN_MS })
  }, 60_000)

  // Over a Unix socket a stopped server's socket file is gone: connecting fails otherwise than over TCP.
  it.each([
    ['TCP', () => postgres.url],
    ['a Unix socket', () => postgres.socketUrl],
  ])('answers 503 store_unavailable while the server restarts and is stopped, and recovers; /ready says so (over %s)', async (_, database) => {
    const ready: { away?: { status: number; body: unknown }; back?: { status: number; body: unknown } } = {}
    const probe = async (admin: string) => {
      const started = Date.now()
      const response = await fetch(`${admin}/ready`)
      expect(Date.now() - started, '/ready took too long').toBeLessThan(3000)
      return { status: response.status, body: await response.json() }
    }
    // While stopped (from when `pg_ctl stop` has returned to when `pg_ctl start` is called), the server surely refuses connections.
    const stopped = { from: 0, to: 0 }
    const { outcomes, awayAt, backAt, kinds } = await underLoad(async (admin) => {
      const awayAt = Date.now()
      await postgres.restart()
      await sleep(1000)
      await postgres.stop()
      stopped.from = Date.now()
      await sleep(500)
      ready.away = await probe(admin)
      await sleep(2500)
      stopped.to = Date.now()
      await postgres.start()
      const backAt = Date.now()
      await sleep(2000)
      ready.back = await probe(admin)
      return { awayAt, backAt }
    }, database())
    expectOutageHandled(outcomes, { code: 'store_unavailable', awayAt, backAt })
    expectEveryKindUnavailable(outcomes, kinds, { code: 'store_unavailable', ...stopped })
    expectEveryKindBack(outcomes, kinds, { backAt, withinMs: RECOVERED_WITHIN_MS })
    expect(ready.away?.status).toBe(503)
    expect(ready.away?.body).toMatchObject({ status: 'not ready', checks: { store: expect.not.stringMatching(/^ok$/), blobs: 'ok' } })
    expect(ready.back).toMatchObject({ status: 200, body: { status: 'ready', checks: { store: 'ok', blobs: 'ok' } } })
  }, 60_000)

  it('fails a read the server does not answer within readTimeoutMs, drops its connection, and reads on', async () => {
    const store = await createPostgresStore({ connectionString: postgres.url, readTimeoutMs: 500 })
    try {
      const started = Date.now()
      const error = await sql`select pg_sleep(3)`.execute(store.db).then(() => null, (thrown: unknown) => thrown)
      expect(isDependencyUnavailable(error) && error.dependency).toBe('store')
      expect(Date.now() - started).toBeLessThan(1500)
      // The pool lends a working connection, not the one left waiting.
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db)
      expect(rows).toHaveLength(1)
      // Statements in a transaction are not cut: an import's may wait for the writers' lock.
      await store.db.transaction().execute((tx) => sql`select pg_sleep(1)`.execute(tx))
    } finally {
      await store.close()
    }
  })

  it('stops an import that loses its database at a batch boundary, naming the line', async () => {
    const lines = 200_000
    const file = join(directory, 'big.ndjson')
    await writeFile(file, Array.from({ length: lines }, (_, index) => JSON.stringify({ id: bigId(index + 1), type: 'person', name: `Big ${index + 1}` })).join('\n') + '\n')
    const importing = runCli(['import', '--data', directory, '--database', postgres.url, file])
    // Stopped once some batches have committed (an import that ends first fails the wait).
    let ended = false
    void importing.then(() => (ended = true))
    await until(async () => ended || (await bigCount()) >= 3 * IMPORT_BATCH)
    await postgres.stop()
    const { code, stderr } = await importing
    await postgres.start()

    expect(code).toBe(1)
    const stopped = /import: the store became unavailable at line (\d+): /.exec(stderr)
    expect(stopped, stderr).not.toBeNull()
    const line = Number(stopped![1])
    expect(line).toBeLessThan(lines)
    // The lines before it applied, whole batches; none from it on.
    expect((line - 1) % IMPORT_BATCH).toBe(0)
    expect(await bigCount()).toBe(line - 1)
    await withPostgresClient(postgres.url, async (client) => {
      const { rows } = await client.query<{ id: string }>(`select id from entities where id like 'big%' order by id desc limit 1`)
      expect(rows[0]?.id).toBe(bigId(line - 1))
      // Every entity's last change is the entity as it is stored, and each imported one has one change.
      const stale = await client.query(
        `select e.id from entities e left join lateral (select snapshot from changes c where c.entity_id = e.id order by seq desc limit 1) last on true
         where last.snapshot is distinct from e.snapshot`,
      )
      expect(stale.rows).toEqual([])
      const changes = await client.query<{ count: string }>(`select count(*) from changes where entity_id like 'big%'`)
      expect(Number(changes.rows[0]!.count)).toBe(line - 1)
    })
  }, 90_000)
})

const bigId = (line: number) => `big${String(line).padStart(6, '0')}`

async function bigCount(): Promise<number> {
  return withPostgresClient(postgres.url, async (client) => Number((await client.query<{ count: string }>(`select count(*) from entities where id like 'big%'`)).rows[0]!.count)).catch(() => 0)
}

async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(20)
  }
}

function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })))
}

/**
 * Writes through a store of its own every 50 ms (new entities, updates, deletes; after a first
 * merge the load's merged path needs), retrying while the server is away; `stop` says how many
 * writes succeeded.
 */
async function startWriter(url: string): Promise<{ stop(): Promise<number> }> {
  const store = await createPostgresStore({ connectionString: url })
  const run = Date.now().toString(36)
  await store.warehouse.apply([{ op: 'merge', id: 'a000039', into: 'a000041' }])
  let stopped = false
  let written = 0
  const writing = (async () => {
    for (let round = 0; !stopped; round++) {
      const id = `w${run}x${round % 40}`
      const write =
        round % 13 === 12 ? store.warehouse.apply([{ op: 'delete', id }]) : store.warehouse.upsert({ id, type: 'person', name: `Writer ${round}` })
      await write.then(
        (result) => {
          if (!Array.isArray(result) || result[0]!.ok) written++
        },
        () => undefined,
      )
      await sleep(50)
    }
  })()
  return {
    async stop() {
      stopped = true
      await writing
      await store.close()
      return written
    },
  }
}
