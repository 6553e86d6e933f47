/**
 * How a PostgreSQL instance hears of other processes' commits: `LISTEN` on a connection of its own,
 * made again after the server ends it; and, where a notification sent after `LISTEN` never arrives
 * (a transaction pooler; here, a listener on another database, which no notification of this one
 * reaches), the feed's head read every 250 ms instead.
 */
import pg from 'pg'
import { afterEach, expect, it } from 'vitest'
import { createPostgresStore, type KyselyStore } from '../../src/kysely/index.js'
import { postgresNotifier, FEED_CHANNEL, type ListenClient } from '../../src/kysely/postgres-notifications.js'
import { describeEachStore, freshPostgresSchema, POSTGRES_URL, storeDialects } from '../stores/each-store.js'
import { withPostgresClient } from '../support/postgres-client.js'
import { pgbouncerSkipReason, startPgBouncer } from '../support/pgbouncer.js'

const opened: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close()
})

async function schemaStores(count: number): Promise<KyselyStore[]> {
  const schema = await freshPostgresSchema()
  opened.push(schema.drop)
  const stores = await Promise.all(Array.from({ length: count }, () => createPostgresStore({ connectionString: schema.url })))
  for (const store of stores) opened.push(() => store.close())
  return stores
}

const wakes = () => {
  let count = 0
  const waiting: (() => void)[] = []
  return {
    wake: () => {
      count++
      waiting.splice(0).forEach((resolve) => resolve())
    },
    get count() {
      return count
    },
    next: () => new Promise<void>((resolve) => waiting.push(resolve)),
  }
}

describeEachStore(
  storeDialects.filter((dialect) => dialect.name === 'postgres'),
  'PostgreSQL commit notifications',
  () => {
    it('wakes on another process\'s commit; after the server ends the listening connection, listens again', async () => {
      const [reader, writer] = await schemaStores(2)
      const woken = wakes()
      const unsubscribe = reader!.changeNotifier!.subscribe(woken.wake)
      opened.push(async () => unsubscribe())
      // Listening: the wake it gives once it listens.
      await woken.next()
      let next = woken.next()
      await writer!.warehouse.upsert({ id: 'p1', type: 'person', name: 'p1' })
      await next
      // Every listener of the feed on the server (another test's too: it listens again as this one must).
      const ended = await withPostgresClient(POSTGRES_URL, (client) =>
        client.query(`select pg_terminate_backend(pid) from pg_stat_activity where query = 'listen ${FEED_CHANNEL}' and pid <> pg_backend_pid()`),
      )
      expect(ended.rowCount).toBeGreaterThan(0)
      // Listening again (the wake on reconnecting), then woken by a commit again.
      await woken.next()
      next = woken.next()
      await writer!.warehouse.upsert({ id: 'p2', type: 'person', name: 'p2' })
      await next
    }, 30_000)

    it('reads the feed head instead where a notification sent after LISTEN never comes back', async () => {
      const schema = await freshPostgresSchema()
      opened.push(schema.drop)
      const writer = await createPostgresStore({ connectionString: schema.url })
      opened.push(() => writer.close())
      // The listener's connection is to another database: no notification of this one reaches it.
      const elsewhere = new URL(schema.url)
      elsewhere.pathname = '/postgres'
      const reasons: string[] = []
      const notifier = postgresNotifier({
        mode: 'auto',
        connect: async () => {
          const client = new pg.Client({ connectionString: elsewhere.href })
          client.on('error', () => {})
          await client.connect()
          return Object.assign(client, { close: () => client.end() }) as unknown as ListenClient
        },
        notify: (payload) => withPostgresClient(schema.url, async (client) => void (await client.query('select pg_notify($1, $2)', [FEED_CHANNEL, payload]))),
        readHead: () => writer.feedHead(),
        onPolling: (reason) => reasons.push(reason),
      })
      const woken = wakes()
      const unsubscribe = notifier.subscribe(woken.wake)
      opened.push(async () => unsubscribe())
      await expect.poll(() => reasons.length, { timeout: 10_000 }).toBe(1)
      expect(reasons[0]).toContain('transaction pooler')
      // The first read of the head sets where it stands; a commit then changes it.
      await new Promise((resolve) => setTimeout(resolve, 600))
      const next = woken.next()
      await writer.warehouse.upsert({ id: 'p1', type: 'person', name: 'p1' })
      await next
    }, 30_000)
  },
)

describeEachStore(
  storeDialects.filter((dialect) => dialect.name === 'postgres' && pgbouncerSkipReason === null),
  'PostgreSQL commit notifications through PgBouncer (transaction mode)',
  () => {
    it('finds that LISTEN does not last there, and wakes on the feed head it reads instead', async () => {
      const bouncer = await startPgBouncer()
      opened.push(() => bouncer.stop())
      const schema = await bouncer.freshSchema()
      opened.push(schema.drop)
      const reasons: string[] = []
      const reader = await createPostgresStore({ connectionString: schema.url, onFeedPolling: (reason) => reasons.push(reason) })
      opened.push(() => reader.close())
      const writer = await createPostgresStore({ connectionString: schema.url })
      opened.push(() => writer.close())
      const woken = wakes()
      const unsubscribe = reader.changeNotifier!.subscribe(woken.wake)
      opened.push(async () => unsubscribe())
      await expect.poll(() => reasons.length, { timeout: 10_000 }).toBe(1)
      await new Promise((resolve) => setTimeout(resolve, 600))
      const next = woken.next()
      await writer.warehouse.upsert({ id: 'p1', type: 'person', name: 'p1' })
      await next
    }, 30_000)
  },
)
