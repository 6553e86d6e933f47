/**
 * Reads go as named prepared statements (planned once a session) only on a connection whose server
 * session is its own: directly, yes; through PgBouncer in transaction mode, never (a name there
 * would be prepared in a session other clients get next).
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, type KyselyStore } from '../../src/kysely/index.js'
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js'
import { freshPostgresSchema, storeDialects } from './each-store.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!
const skipReason = postgres.skipReason ?? pgbouncerSkipReason

describe.skipIf(skipReason !== null)(`named reads${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
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

  it('are named on a direct connection', async () => {
    expect(await preparedAfterReads(await freshPostgresSchema())).toBeGreaterThan(0)
  })

  it('are never named through PgBouncer in transaction mode', async () => {
    expect(await preparedAfterReads(await bouncer.freshSchema())).toBe(0)
  })
})
