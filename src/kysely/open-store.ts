import type { KyselyStore } from './kysely-store.js'
import { createPgliteStore, createPostgresStore } from './postgres.js'
import { createSqliteStore } from './sqlite.js'

const POSTGRES_URL = /^postgres(ql)?:\/\//i
const PGLITE_PREFIX = 'pglite:'
/** Any other `scheme://`: not a file path, and no store of this package. */
const OTHER_URL = /^([a-z][a-z0-9+.-]*):\/\//i

/** Which store a database option names: PostgreSQL, PGlite or a SQLite file (null: an unsupported `scheme://`). */
export function storeKindOf(location: string): 'postgres' | 'pglite' | 'sqlite' | null {
  if (POSTGRES_URL.test(location)) return 'postgres'
  if (location.startsWith(PGLITE_PREFIX)) return 'pglite'
  return OTHER_URL.test(location) ? null : 'sqlite'
}

export interface OpenStoreOptions {
  /** What a PGlite database loads (the search index inside it needs some). */
  pgliteExtensions?: Record<string, unknown>
  /** A PostgreSQL database's streaming replica, `postgres://…`, which the reads go to (`PostgresStoreOptions.readFrom`). */
  readFrom?: string
  /** The most connections to each PostgreSQL database (`createPostgresStore`'s `poolSize`). */
  poolSize?: number
  /** Told when a PostgreSQL store's waiting change-feed requests read the feed's head instead of hearing `NOTIFY` (`createPostgresStore`'s `onFeedPolling`). */
  onFeedPolling?: (reason: string) => void
}

/**
 * The store a database option names: a `postgres://` or `postgresql://` URL; `pglite:` followed by
 * a directory (`pglite://path` or `pglite:path`; in memory when empty); else a SQLite file path. Any
 * other `scheme://` is refused (`mysql://…` must not become a SQLite file of that name).
 */
export function openStore(location: string, { pgliteExtensions, readFrom, poolSize, onFeedPolling }: OpenStoreOptions = {}): Promise<KyselyStore> {
  const kind = storeKindOf(location)
  if (readFrom !== undefined && (kind !== 'postgres' || storeKindOf(readFrom) !== 'postgres')) {
    return Promise.reject(new Error('a replica to read from needs a PostgreSQL database and a postgres:// replica of it'))
  }
  if (kind === 'postgres') {
    return createPostgresStore({
      connectionString: location,
      ...(readFrom === undefined ? {} : { readFrom: { connectionString: readFrom } }),
      ...(poolSize === undefined ? {} : { poolSize }),
      ...(onFeedPolling === undefined ? {} : { onFeedPolling }),
    })
  }
  if (kind === 'pglite') {
    const dataDir = location.slice(PGLITE_PREFIX.length).replace(/^\/\//, '')
    return createPgliteStore({ ...(dataDir === '' ? {} : { dataDir }), ...(pgliteExtensions ? { extensions: pgliteExtensions } : {}) })
  }
  if (kind === null) {
    return Promise.reject(new Error(`unsupported database "${OTHER_URL.exec(location)![1]}://": use a SQLite file path, postgres://, postgresql:// or pglite:`))
  }
  return createSqliteStore({ file: location })
}
