import type { KyselyStore } from './kysely-store.js'
import { createPgliteStore, createPostgresStore } from './postgres.js'
import { createSqliteStore } from './sqlite.js'

const POSTGRES_URL = /^postgres(ql)?:\/\//i
const PGLITE_PREFIX = 'pglite:'

/**
 * The store a database option names: a `postgres://` or `postgresql://` URL; `pglite:` followed by
 * a directory (`pglite://path` or `pglite:path`; in memory when empty); else a SQLite file path.
 */
export function openStore(location: string): Promise<KyselyStore> {
  if (POSTGRES_URL.test(location)) return createPostgresStore({ connectionString: location })
  if (location.startsWith(PGLITE_PREFIX)) {
    const dataDir = location.slice(PGLITE_PREFIX.length).replace(/^\/\//, '')
    return createPgliteStore(dataDir === '' ? {} : { dataDir })
  }
  return createSqliteStore({ file: location })
}
