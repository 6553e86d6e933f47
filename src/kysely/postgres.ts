import { Kysely, PGliteDialect, PostgresDialect, type PostgresPool } from 'kysely'
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
  return createOwningStore(new Kysely({ dialect: new PostgresDialect({ pool }) }), 'postgres', options)
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
