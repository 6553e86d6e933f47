import type { Database, Statement } from 'better-sqlite3'
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely'
import { foldCase } from '../gffs/evaluate.js'
import { createOwningStore, type KyselyStore, type StoreTuning } from './kysely-store.js'
import { SQLITE_FOLD_FUNCTION } from './sql-dialect.js'

export interface SqliteStoreOptions extends StoreTuning {
  /** A database file (created when missing), or `:memory:`. */
  file: string
}

/**
 * The embedded default: a SQLite file through better-sqlite3, in WAL mode (other processes read
 * while one writes). Within the process, reads and writes share the one connection.
 */
export async function createSqliteStore({ file, ...tuning }: SqliteStoreOptions): Promise<KyselyStore> {
  // Loaded on demand, so that a PostgreSQL deployment never loads the native module.
  const { default: BetterSqlite3 } = await import('better-sqlite3')
  const database = new BetterSqlite3(file)
  // Another process's writer holds the lock for one transaction at a time: wait for it.
  database.pragma('busy_timeout = 5000')
  database.pragma('journal_mode = WAL')
  // In WAL mode NORMAL stays consistent after a crash and may lose only the last commits on power loss.
  database.pragma('synchronous = NORMAL')
  registerSqliteFunctions(database)
  return createOwningStore(new Kysely({ dialect: new SqliteDialect({ database: withStatementCache(database) }) }), 'sqlite', tuning)
}

/**
 * What `registerSqliteFunctions` needs of a better-sqlite3 database: its own type stays out of this
 * package's public types, so a consumer compiles without `@types/better-sqlite3`.
 */
export interface SqliteFunctionHost {
  function(name: string, options: { deterministic: boolean }, implementation: (value: unknown) => unknown): unknown
}

/** Adds the functions the store's SQL calls to a better-sqlite3 database opened elsewhere. */
export function registerSqliteFunctions(database: SqliteFunctionHost): void {
  // SQLite's own lower() folds ASCII only; `~` must fold as the in-memory evaluation does.
  database.function(SQLITE_FOLD_FUNCTION, { deterministic: true }, (value: unknown) =>
    value === null ? null : foldCase(String(value)),
  )
}

/** Prepared statements kept per SQL text; a query shape seldom used falls out first. */
const STATEMENT_CACHE_SIZE = 256

/**
 * Kysely prepares every query anew, and preparing costs more than running a point query: caching
 * the statements makes writes about three times faster (bench/README.md). A statement runs to
 * completion before the next query on this one connection, so sharing it is safe.
 */
function withStatementCache(database: Database): SqliteDatabase {
  const statements = new Map<string, Statement>()
  return {
    close: () => database.close(),
    prepare(sql: string) {
      let statement = statements.get(sql)
      if (statement === undefined) {
        statement = database.prepare(sql)
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!)
      } else {
        statements.delete(sql)
      }
      statements.set(sql, statement)
      return statement
    },
  }
}
