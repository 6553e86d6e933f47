/**
 * The lease that picks the one instance indexing a shared index, on the PostgreSQL server: directly
 * and through PgBouncer in transaction mode (where a session lock would go to whichever client came next).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore } from '../../src/kysely/index.js'
import { followIndexingLock, type IndexingLock } from '../../src/postgres-search/index.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!
const CHECK_EVERY_MS = 100

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
      const lock: IndexingLock = await followIndexingLock({ db: store.db, onAcquired: () => events.push('acquired'), onLost: () => events.push('lost'), checkEveryMs: CHECK_EVERY_MS })
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
  })
}
