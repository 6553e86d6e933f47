/**
 * What the PostgreSQL store leaves in a server session, which a transaction pooler lends to other
 * clients between transactions. Reads go as named prepared statements (planned once a session)
 * only on a connection whose session is its own: directly, yes; through PgBouncer in transaction
 * mode, never (a name there would be prepared in a session other clients get next). Opening (its
 * migrations) leaves no session lock behind.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type KyselyStore } from '../../src/kysely/index.js'
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js'
import { freshPostgresSchema, storeDialects } from './each-store.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!
const skipReason = postgres.skipReason ?? pgbouncerSkipReason

describe.skipIf(skipReason !== null)(`PostgreSQL sessions, directly and through PgBouncer${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let bouncer: PgBouncer
  beforeAll(async () => {
    bouncer = await startPgBouncer({ poolSize: 1 })
  })
  afterAll(async () => {
    await bouncer?.stop()
  })

  /** The statements the store's one connection (one server session, PgBouncer's one too) has prepared, after reads. */
  async function preparedAfterReads(schema: { url: string; drop(): Promise<void> }): Promise<number> {
    const store: KyselyStore = await createPostgresStore({ connectionString: schema.url, poolSize: 1 })
    try {
      await store.warehouse.upsert({ id: 'p1', type: 'person', name: 'Ada' })
      for (let read = 0; read < 3; read++) {
        await store.getEntity('p1')
        await store.listEntities({ qualifiers: [], after: null, limit: 10 })
      }
      const { rows } = await sql<{ count: string }>`select count(*) from pg_prepared_statements where name like 'entity_registry_%'`.execute(store.db)
      return Number(rows[0]!.count)
    } finally {
      await store.close()
      await schema.drop()
    }
  }

  it('reads are named on a direct connection', async () => {
    expect(await preparedAfterReads(await freshPostgresSchema())).toBeGreaterThan(0)
  })

  it('reads are never named through PgBouncer in transaction mode', async () => {
    expect(await preparedAfterReads(await bouncer.freshSchema())).toBe(0)
  })

  it('opens stores at once through PgBouncer on a new schema, and leaves no session lock held (the migrations lock with their transaction)', async () => {
    // Three server sessions for eight stores: a session lock taken on one would be let go on another.
    const shared = await startPgBouncer({ poolSize: 3 })
    const schema = await shared.freshSchema()
    const role = new URL(schema.url).username
    const stores: KyselyStore[] = []
    try {
      const opened = await Promise.allSettled(Array.from({ length: 8 }, () => createPostgresStore({ connectionString: schema.url })))
      for (const result of opened) if (result.status === 'fulfilled') stores.push(result.value)
      expect(opened.map((result) => (result.status === 'rejected' ? String(result.reason) : result.status))).toEqual(Array.from({ length: 8 }, () => 'fulfilled'))
      const { rows } = await sql<{ count: string }>`select count(*) from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and a.usename = ${role}`.execute(stores[0]!.db)
      expect(Number(rows[0]!.count)).toBe(0)
    } finally {
      for (const store of stores) await store.close()
      await schema.drop()
      await shared.stop()
    }
  })
})
