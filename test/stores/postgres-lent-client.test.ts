/**
 * A connection the server ends at once, in the same read that completes it (as `pg_terminate_backend`
 * does to a backend just made): its client's 'error' comes after the pool has lent it out and before
 * the store's code runs. That must not end the process.
 */
import pg from 'pg'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { createPostgresStore } from '../../src/kysely/postgres.js'
import { freshPostgresSchema, storeDialects } from './each-store.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

describe.skipIf(postgres.skipReason !== null)('PostgreSQL store: a lent client that errors at once', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it('hears the error: the process goes on, and the next query gets a working connection', async () => {
    const schema = await freshPostgresSchema()
    cleanups.push(schema.drop)
    const pool = new pg.Pool({ connectionString: schema.url })
    const unheard: unknown[] = []
    const onUncaught = (error: unknown) => unheard.push(error)
    process.on('uncaughtException', onUncaught)
    cleanups.push(async () => void process.off('uncaughtException', onUncaught))
    let first = true
    // After the pool has taken its own listener off the lent client, before the store's code runs.
    pool.on('acquire', (client) => {
      if (!first) return
      first = false
      process.nextTick(() => client.emit('error', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })))
    })
    // The pool's first client is new: the store's first query (a migration) is lent it.
    const store = await createPostgresStore({ pool })
    cleanups.push(() => store.close())
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(store.db)
    expect(rows).toEqual([{ one: 1 }])
    expect(unheard).toEqual([])
  })
})
