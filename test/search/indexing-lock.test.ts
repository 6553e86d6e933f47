/**
 * The lease that picks the one instance indexing a shared index, on the PostgreSQL server: directly
 * and through PgBouncer in transaction mode (where a session lock would go to whichever client came next).
 */
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore } from '../../src/kysely/index.js'
import { followIndexingLock, type IndexingLock } from '../../src/postgres-search/index.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!
/**
 * Checks ten times a second, and a lease of two seconds: a loaded CI machine can hold a process off
 * its cores for a few hundred milliseconds, which a lease of three checks (300 ms) would not outlive.
 */
const CHECK_EVERY_MS = 100
const LEASE_MS = 2000

let bouncer: PgBouncer | undefined
const connections = [
  { name: 'directly', skipReason: postgres.skipReason, freshSchema: freshPostgresSchema },
  { name: 'through PgBouncer (transaction mode)', skipReason: postgres.skipReason ?? pgbouncerSkipReason, freshSchema: () => bouncer!.freshSchema() },
]

beforeAll(async () => {
  if (connections[1]!.skipReason === null) bouncer = await startPgBouncer()
})
afterAll(async () => {
  await bouncer?.stop()
})

it('refuses a lease no longer than a check, which would run out between its renewals', async () => {
  const options = { db: {} as Kysely<any>, onAcquired: () => {}, onLost: () => {}, checkEveryMs: 1000 }
  await expect(followIndexingLock({ ...options, leaseMs: 1000 })).rejects.toThrow(RangeError)
  await expect(followIndexingLock({ ...options, leaseMs: 500 })).rejects.toThrow(/leaseMs \(500\) must be longer than checkEveryMs \(1000\)/)
})

for (const connection of connections) {
  describe.skipIf(connection.skipReason !== null)(`the indexing lease, ${connection.name}${connection.skipReason ? ` (skipped: ${connection.skipReason})` : ''}`, () => {
    const cleanups: (() => Promise<void>)[] = []
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
    })

    /** An instance following the lease over its own store (its own pool), as `serve` does. */
    async function leaseOn(url: string) {
      const store = await createPostgresStore({ connectionString: url })
      const events: string[] = []
      const lock: IndexingLock = await followIndexingLock({ db: store.db, onAcquired: () => events.push('acquired'), onLost: () => events.push('lost'), checkEveryMs: CHECK_EVERY_MS, leaseMs: LEASE_MS })
      cleanups.push(() => store.close(), () => lock.close())
      return { lock, events, store }
    }

    it('goes to one instance of a schema, to the next when that one lets go, and to one of every other schema at once', async () => {
      const [shared, other] = await Promise.all([connection.freshSchema(), connection.freshSchema()])
      cleanups.push(shared.drop, other.drop)
      const first = await leaseOn(shared.url)
      const second = await leaseOn(shared.url)
      const elsewhere = await leaseOn(other.url)
      expect([first.lock.held(), second.lock.held(), elsewhere.lock.held()]).toEqual([true, false, true])
      // Renewed, it stays with the first: the second never takes it meanwhile.
      await new Promise((resolve) => setTimeout(resolve, CHECK_EVERY_MS * 10))
      expect([first.lock.held(), second.lock.held()]).toEqual([true, false])

      await first.lock.close()
      await expect.poll(() => second.lock.held(), { timeout: 5000 }).toBe(true)
      expect([first.events, second.events]).toEqual([['acquired'], ['acquired']])
    })

    it('goes to another instance once a holder that stopped renewing (died) lets its lease run out, and the holder knows it lost it', async () => {
      const schema = await connection.freshSchema()
      cleanups.push(schema.drop)
      const holder = await leaseOn(schema.url)
      const other = await leaseOn(schema.url)
      expect([holder.lock.held(), other.lock.held()]).toEqual([true, false])
      // Its database gone (as for a process killed, or cut off): no renewal, and no release.
      await holder.store.close()
      await expect.poll(() => other.lock.held(), { timeout: 5000 }).toBe(true)
      expect(holder.lock.held()).toBe(false)
      expect(holder.events).toEqual(['acquired', 'lost'])
    })

    it('keeps the lease when its process stalls past the last lease\'s life but not the renewal\'s, sent before the stall and answered during it', async () => {
      const schema = await connection.freshSchema()
      cleanups.push(schema.drop)
      // A pool whose next query, once sent, is followed by a stall of the event loop (a long
      // synchronous task, a starved process) while the server answers: when the stall ends, the
      // last lease's expiry timer is due before the answer, which extends it, is read.
      let stallNextMs = 0
      const pool = new pg.Pool({ connectionString: schema.url })
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown
        ;(client as unknown as { query: typeof query }).query = (...args) => {
          const sent = query(...args)
          const stallMs = stallNextMs
          stallNextMs = 0
          if (stallMs > 0)
            setImmediate(() => {
              const until = performance.now() + stallMs
              while (performance.now() < until);
            })
          return sent
        }
      })
      const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) })
      cleanups.push(() => db.destroy())
      const events: string[] = []
      // Renewed every 600 ms, lasting 1,200: a stall of 900 from a renewal ends past the last lease's
      // life, within the new one's, 300 ms clear of either (the margin is half a check at most: 150 ms
      // with checks every 300 was lost once to a loaded CI machine).
      const lock = await followIndexingLock({ db, onAcquired: () => events.push('acquired'), onLost: () => events.push('lost'), checkEveryMs: 600, leaseMs: 1200 })
      cleanups.push(() => lock.close())
      stallNextMs = 900
      await expect.poll(() => stallNextMs, { timeout: 3000 }).toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 2000))
      expect(events).toEqual(['acquired'])
      expect(lock.held()).toBe(true)
    })
  })
}
