import { Kysely, PGliteDialect, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely'
import { overriding } from './overriding.js'
import { createOwningStore, type KyselyStore, type StoreTuning } from './kysely-store.js'

/** `pool`: a `pg.Pool` (typed by Kysely's structural `PostgresPool`, so that no `@types/pg` is needed). */
export type PostgresStoreOptions = ({ connectionString: string } | { pool: PostgresPool }) & StoreTuning

/** The scale-out store: PostgreSQL through `pg`. Closing the store ends the pool, a given one too. */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<KyselyStore> {
  // Loaded on demand, as the SQLite and PGlite drivers are.
  const { default: pg } = await import('pg').catch((cause: unknown) => {
    throw new Error('createPostgresStore needs the package pg: npm install pg', { cause })
  })
  const pool = 'pool' in options ? options.pool : new pg.Pool({ connectionString: options.connectionString })
  return createOwningStore(new Kysely({ dialect: new PostgresDialect({ pool: withNamedReads(pool) }) }), 'postgres', options)
}

/** Distinct read statements a process names; the query shapes the store keeps are as many. */
const MAX_NAMED_READS = 256

/**
 * The pool, whose clients send each read (`select`) as a named statement: PostgreSQL parses and
 * plans an unnamed statement on every call, and a named one once a connection (which doubles the
 * rate of a page query, measured with pgbench). Kysely sends every query unnamed; with the query
 * shapes compiled once, the texts repeat, and the first MAX_NAMED_READS of them are named.
 *
 * Each query goes with a callback, and the promise is made here: awaiting `pg`'s own promise, ten
 * concurrent page queries kept so much alive that V8 moved it to the old generation, 20 full
 * collections in 4 s against one with the callback (19,000 page queries against 27,600; measured
 * with pg 8.23 and Kysely's driver, bench/README.md).
 */
function withNamedReads(pool: PostgresPool): PostgresPool {
  const names = new Map<string, string>()
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text)
    if (name === undefined && names.size < MAX_NAMED_READS && /^select /i.test(text)) {
      name = `entity_registry_${names.size}`
      names.set(text, name)
    }
    return name
  }
  const namingReads = (client: PostgresPoolClient) =>
    overriding(client, 'query', (...query: unknown[]) => {
      const [text, values] = query
      const send = client.query as (...query: unknown[]) => unknown
      // A cursor (Kysely's streaming) goes as it came.
      if (typeof text !== 'string') return send.apply(client, query)
      const name = nameOf(text)
      return new Promise((resolve, reject) => {
        const done = (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result))
        send.call(client, name === undefined ? { text, values } : { name, text, values }, done)
      })
    })
  return overriding(pool, 'connect', async () => namingReads(await pool.connect()))
}

export interface PgliteStoreOptions extends StoreTuning {
  /** A directory to keep the database in; in memory when absent. */
  dataDir?: string
}

/** PostgreSQL in process (PGlite, WebAssembly): tests, demos, and PostgreSQL semantics without a server. */
export async function createPgliteStore({ dataDir, ...tuning }: PgliteStoreOptions = {}): Promise<KyselyStore> {
  const { PGlite } = await import('@electric-sql/pglite').catch((cause: unknown) => {
    throw new Error('createPgliteStore needs the package @electric-sql/pglite: npm install @electric-sql/pglite', {
      cause,
    })
  })
  return createOwningStore(new Kysely({ dialect: new PGliteDialect({ pglite: new PGlite(dataDir) }) }), 'postgres', tuning)
}
